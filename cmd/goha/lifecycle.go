package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"

	"goha/core/stream"
	"goha/runtime"
)

// takeOldSockets gives proc the listening sockets of the process that
// serves the stats socket at path (-x, or the previous worker on a
// master's reload), before it binds: a bind whose address one of them has
// keeps it rather than binding its own. It reports false when the sockets
// could not be had; the message is printed.
func takeOldSockets(proc *stream.Process, path string, stderr io.Writer) bool {
	// HAProxy's way to say "no old process" on a first start.
	if path == "" || path == os.DevNull {
		return true
	}
	socks, err := runtime.GetSockets(path)
	if err != nil {
		fmt.Fprintf(stderr, "[WARNING]  (%d) : %v\n", os.Getpid(), capitalize(err.Error()))
		fmt.Fprintf(stderr, "[ALERT]    (%d) : Failed to get the sockets from the old process!\n", os.Getpid())
		return false
	}
	files := make([]*os.File, 0, len(socks))
	for _, s := range socks {
		files = append(files, s.File)
	}
	proc.Adopt(files)
	return true
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return string(bytes.ToUpper([]byte(s[:1]))) + s[1:]
}

// removeOwnPid removes the pid file unless another process has written
// its pid there since: after a hand-over the file is the new process's.
func removeOwnPid(path string, pid int) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	if n, err := strconv.Atoi(string(bytes.TrimSpace(b))); err == nil && n == pid {
		os.Remove(path)
	}
}

// sdNotify sends a state to systemd's notification socket, as
// sd_notify(3) does; without $NOTIFY_SOCKET it does nothing.
func sdNotify(state string) {
	path := os.Getenv("NOTIFY_SOCKET")
	if path == "" {
		return
	}
	// An abstract socket's '@' is Go's spelling of its leading NUL too.
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		return
	}
	defer c.Close()
	c.Write([]byte(state))
}

// pauseResume pauses (SIGTTOU) or resumes (SIGTTIN) the listeners, with
// HAProxy's messages; GLOBAL, the stats sockets' frontend, is named first
// as HAProxy names it (its UNIX sockets go on answering there too). It
// reports false when a pause failed and the process must stop softly.
func pauseResume(proc *stream.Process, pause bool, stderr io.Writer) bool {
	verb := "Resumed"
	names, ok := []string(nil), true
	if pause {
		verb = "Paused"
		names, ok = proc.PauseListeners()
	} else {
		names, ok = proc.ResumeListeners()
	}
	if len(proc.Conf.Global.StatsSockets) > 0 {
		names = append([]string{"GLOBAL"}, names...)
	}
	for _, n := range names {
		fmt.Fprintf(stderr, "[WARNING]  (%d) : %s frontend %s.\n", proc.PID, verb, n)
	}
	if ok {
		return true
	}
	if pause {
		fmt.Fprintf(stderr, "[WARNING]  (%d) : Some proxies refused to pause, performing soft stop now.\n", proc.PID)
		return false
	}
	fmt.Fprintf(stderr, "[WARNING]  (%d) : Some proxies refused to resume, probably due to a conflict on a listening port. You may want to try again after the conflicting application is stopped, otherwise a restart might be needed to resume safe operations.\n", proc.PID)
	return true
}
