package main

// Master-worker mode (-W), as HAProxy runs it and as VTest drives it.
//
// The master loads and checks the configuration, writes its own pid to the
// pid file, then starts one worker: a fresh exec of the same binary and
// arguments, marked by GOHA_WORKER_PID_MASTER in its environment. Inherited
// descriptors (the fd@N sockets a test harness bound) reach the worker under
// the same numbers. The master forwards SIGINT, SIGTERM, SIGUSR1, SIGTTOU
// and SIGTTIN to the workers and exits when the current one does, with
// HAProxy's status: the worker's exit code, or 128 + the signal that killed
// it (130 after SIGINT), except that 143 (SIGTERM) counts as a clean exit.
//
// SIGUSR2 and `reload` start a new worker, which reads the configuration
// again and takes the current worker's listening sockets over that
// worker's private stats socket (_getsocks, GOHA_WORKER_XFER); once it
// serves, the previous worker gets SIGUSR1 and finishes as an old worker.
// A new worker that exits first leaves the current one in place.
//
// -S opens the master CLI. Its own commands are help, prompt, quit,
// reload, show proc, show startup-logs and show version; "@<n> <command>",
// "@!<pid> <command>" and a bare "@<n>" (which makes the worker the
// session's target) send commands to a worker's private stats socket, a
// UNIX socket in a directory the master creates and removes. The master
// appends that socket to the worker's configuration (level admin, expose-fd
// listeners), so the worker serves it wherever it serves its `stats socket`
// lines.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"goha/core"
	"golang.org/x/sys/unix"
)

// Environment of a worker started by a master.
const (
	envWorker    = "GOHA_WORKER_PID_MASTER" // the master's pid
	envWorkerCLI = "GOHA_WORKER_CLI"        // path of the worker's private stats socket
	// the private stats socket of the worker whose listening sockets a
	// new worker takes, on a reload
	envWorkerXfer = "GOHA_WORKER_XFER"
)

// masterWorker runs master-worker mode when -W or `master-worker` asks for
// it. In the master it returns the process's exit status and true. In a
// worker it adjusts the configuration (the master owns the pid file; the
// master CLI needs the private socket) and returns false: the caller goes
// on serving.
func masterWorker(o *options, cfg *core.Config, stderr io.Writer) (int, bool) {
	if !o.master && !cfg.Global.MasterWorker {
		return 0, false
	}
	if os.Getenv(envWorker) != "" {
		o.pidFile = ""
		cfg.Global.PidFile = ""
		if p := workerCLIPath(); p != "" {
			cfg.Global.StatsSockets = append(cfg.Global.StatsSockets,
				core.StatsSocket{Addr: p, Args: []string{"level", "admin", "expose-fd", "listeners"}})
		}
		return 0, false
	}
	return runMaster(o, cfg, stderr), true
}

// workerCLIPath is the private stats socket this worker must serve at level
// admin for its master's CLI, or "" outside master-worker mode.
func workerCLIPath() string {
	if os.Getenv(envWorker) == "" {
		return ""
	}
	return os.Getenv(envWorkerCLI)
}

// worker is one worker process of the master: the current one, or an old
// one finishing its connections after a reload.
type worker struct {
	pid     int
	reloads int // reloads it has lived through
	start   time.Time
	sock    string // its private stats socket
	cmd     *exec.Cmd
}

// workerExit is a worker's end, as the master's loop learns it.
type workerExit struct {
	w  *worker
	st int
}

type master struct {
	pid       int
	start     time.Time
	logOut    io.Writer
	exe       string
	args      []string
	extra     []*os.File // fds 3.. for the worker; placeholders keep the numbering
	sockDir   string
	notify    bool // -Ws: tell systemd through $NOTIFY_SOCKET
	exits     chan workerExit
	progExits chan programExit
	reloadReq chan struct{} // `reload` on the master CLI
	opts      *options      // the command line, to read the programs again on a reload

	mu       sync.Mutex // guards following fields
	cur      *worker    // the worker serving
	old      []*worker  // workers finishing after a reload, oldest first
	seq      int        // numbers the workers' private sockets
	reloads  int        // reloads asked for
	failed   int        // reloads whose new worker did not start
	logs     *startupLog
	progs    []*program // the programs of the current configuration
	oldProgs []*program // programs a reload replaced, still running
	exitCode int        // the status of the first program that failed, for the master's own

	noExitOnFailure bool // master-worker no-exit-on-failure
}

// startupLog keeps what the last (re)load printed, master and new worker
// alike, for show startup-logs.
type startupLog struct {
	mu     sync.Mutex // guards buf and sealed
	buf    []byte
	sealed bool // the load is over: what follows is not start-up output
}

func (l *startupLog) seal() {
	l.mu.Lock()
	l.sealed = true
	l.mu.Unlock()
}

const startupLogMax = 64 << 10

func (l *startupLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	if !l.sealed && len(l.buf)+len(p) <= startupLogMax {
		l.buf = append(l.buf, p...)
	}
	l.mu.Unlock()
	return len(p), nil
}

func (l *startupLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.buf)
}

func runMaster(o *options, cfg *core.Config, stderr io.Writer) int {
	m := &master{pid: os.Getpid(), start: time.Now(), logOut: stderr, args: os.Args[1:],
		notify: o.systemd, exits: make(chan workerExit, 8), reloadReq: make(chan struct{}, 1),
		progExits: make(chan programExit, 8), opts: o, noExitOnFailure: cfg.Global.NoExitOnFailure,
		logs: &startupLog{}}
	exe, err := os.Executable()
	if err != nil {
		m.alertf("cannot find own executable: %v", err)
		return 1
	}
	m.exe = exe

	// Open the master CLI first: its fd@ descriptors must not reach the
	// worker.
	var clis []net.Listener
	for _, spec := range o.masterCLI {
		ln, err := listenMasterCLI(spec)
		if err != nil {
			m.alertf("Failed to create the master CLI socket '%s': %v", spec, err)
			for _, l := range clis {
				l.Close()
			}
			return 1
		}
		clis = append(clis, ln)
	}
	defer func() {
		for _, l := range clis {
			l.Close()
		}
	}()

	m.sockDir, err = os.MkdirTemp("", "goha-master-")
	if err != nil {
		m.alertf("cannot create the worker CLI directory: %v", err)
		return 1
	}
	defer os.RemoveAll(m.sockDir)

	m.extra = inheritedFiles()

	pidFile := o.pidFile
	if pidFile == "" {
		pidFile = cfg.Global.PidFile
	}
	if pidFile != "" {
		if err := writePid(pidFile, m.pid); err != nil {
			m.alertf("cannot create pidfile %s", pidFile)
		}
		defer removeOwnPid(pidFile, m.pid)
	}

	// Catch the signals before the worker exists, so that none is lost.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGUSR1, syscall.SIGHUP, syscall.SIGUSR2,
		syscall.SIGTTOU, syscall.SIGTTIN)
	defer signal.Stop(sigs)

	// The programs first, as HAProxy's master forks them.
	progs, _ := m.startPrograms(cfg.Programs, nil)
	m.mu.Lock()
	m.progs = progs
	m.mu.Unlock()
	w, err := m.startWorker("")
	if err != nil {
		m.alertf("cannot start a worker: %v", err)
		m.signalAll(syscall.SIGTERM)
		return 1
	}
	m.noticef("New worker (%d) forked", w.pid)
	m.noticef("Loading success.")

	for _, ln := range clis {
		go m.serveCLI(ln)
	}

	ready := m.workerReady(w)
	var pending []os.Signal
	for {
		select {
		case sig := <-sigs:
			switch sig {
			case syscall.SIGINT, syscall.SIGTERM, syscall.SIGUSR1:
				m.warnf("Exiting Master process...")
				if ready != nil {
					pending = append(pending, sig)
				} else {
					m.signalAll(sig)
				}
			case syscall.SIGTTOU, syscall.SIGTTIN:
				// Pause and resume are the workers' business.
				if ready != nil {
					pending = append(pending, sig)
				} else {
					m.signalAll(sig)
				}
			case syscall.SIGUSR2:
				if ready != nil {
					<-ready
					ready = nil
				}
				m.reload()
			}
			// SIGHUP is not forwarded: HAProxy's workers ignore it.
		case <-m.reloadReq:
			if ready != nil {
				<-ready
				ready = nil
			}
			m.reload()
		case <-ready:
			ready = nil
			m.mu.Lock()
			m.logs.seal()
			m.mu.Unlock()
			if m.notify {
				sdNotify(fmt.Sprintf("READY=1\nMAINPID=%d", m.pid))
			}
			for _, sig := range pending {
				m.signalAll(sig)
			}
			pending = nil
		case ex := <-m.progExits:
			if m.programExited(ex) {
				m.signalAll(syscall.SIGTERM)
			}
		case ex := <-m.exits:
			m.mu.Lock()
			current := ex.w == m.cur
			if !current {
				for i, o := range m.old {
					if o == ex.w {
						m.old = append(m.old[:i], m.old[i+1:]...)
						break
					}
				}
			}
			m.mu.Unlock()
			if !current {
				if ex.st == 0 {
					m.warnf("Former worker (%d) exited with code 0 (Exit)", ex.w.pid)
				} else {
					m.alertf("Former worker (%d) exited with code %d (%s)", ex.w.pid, ex.st, statusText(ex.st))
				}
				continue
			}
			st := ex.st
			if st == 0 {
				m.warnf("Current worker (%d) exited with code 0 (Exit)", ex.w.pid)
			} else {
				m.alertf("Current worker (%d) exited with code %d (%s)", ex.w.pid, st, statusText(st))
			}
			// As HAProxy's master: a clean exit and SIGTERM's 143 are
			// normal ends, anything else (130 after SIGINT) is reported.
			if st == 128+int(syscall.SIGTERM) {
				st = 0
			}
			m.mu.Lock()
			if m.exitCode != 0 {
				st = m.exitCode
			}
			m.mu.Unlock()
			if m.notify {
				sdNotify("STOPPING=1")
			}
			m.warnf("All workers exited. Exiting... (%d)", st)
			return st
		}
	}
}

// signalAll sends sig to every worker and program, old ones included.
func (m *master) signalAll(sig os.Signal) {
	m.mu.Lock()
	ws := append([]*worker{m.cur}, m.old...)
	ps := append(append([]*program(nil), m.progs...), m.oldProgs...)
	m.mu.Unlock()
	for _, w := range ws {
		if w != nil {
			w.cmd.Process.Signal(sig)
		}
	}
	for _, p := range ps {
		if p.cmd != nil {
			p.cmd.Process.Signal(sig)
		}
	}
}

// reloadWait bounds how long a new worker may take to load its
// configuration and listen before the reload counts as failed.
const reloadWait = 60 * time.Second

// reload starts a new worker on the configuration as it is now. The new
// worker takes the listening sockets from the current one (_getsocks on
// its private socket) and serves; the current one then finishes softly
// (SIGUSR1, bounded by its hard-stop-after). A worker that fails to start
// leaves the current one serving.
func (m *master) reload() {
	if m.notify {
		sdNotify("RELOADING=1")
	}
	m.mu.Lock()
	m.logs = &startupLog{}
	m.reloads++
	prev := m.cur
	for _, w := range append([]*worker{m.cur}, m.old...) {
		w.reloads++
	}
	m.mu.Unlock()
	m.noticef("Reloading HAProxy")
	w, err := m.startWorker(prev.sock)
	ok := err == nil
	if ok {
		ok = m.waitStarted(w)
	}
	defer m.logs.seal()
	if !ok {
		m.mu.Lock()
		m.failed++
		m.mu.Unlock()
		if err != nil {
			m.alertf("cannot start a worker: %v", err)
		}
		m.warnf("Loading failure!")
		if m.notify {
			sdNotify("READY=1")
		}
		return
	}
	m.mu.Lock()
	m.old = append(m.old, prev)
	m.cur = w
	m.mu.Unlock()
	prev.cmd.Process.Signal(syscall.SIGUSR1)
	m.noticef("New worker (%d) forked", w.pid)
	m.reloadPrograms()
	m.noticef("Loading success.")
	if m.notify {
		sdNotify("READY=1")
	}
}

// waitStarted waits until the new worker w serves its private socket,
// and reports false if it exits (or takes too long) first: then it is
// not the current worker, and its exit is reported by nobody else.
func (m *master) waitStarted(w *worker) bool {
	deadline := time.Now().Add(reloadWait)
	for time.Now().Before(deadline) {
		select {
		case ex := <-m.progExits:
			if m.programExited(ex) {
				m.signalAll(syscall.SIGTERM)
			}
		case ex := <-m.exits:
			if ex.w == w {
				return false
			}
			// Another worker's end: handled by the loop afterwards.
			defer func() { m.exits <- ex }()
		default:
		}
		if _, err := os.Stat(w.sock); err == nil {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	w.cmd.Process.Kill()
	return false
}

// startWorker starts a worker on the configuration; xfer, when set, is the
// private socket of the worker whose listening sockets it takes.
func (m *master) startWorker(xfer string) (*worker, error) {
	m.mu.Lock()
	m.seq++
	sock := filepath.Join(m.sockDir, fmt.Sprintf("worker-%d.sock", m.seq))
	logs := m.logs
	m.mu.Unlock()
	cmd := exec.Command(m.exe, m.args...)
	cmd.Env = append(os.Environ(),
		envWorker+"="+strconv.Itoa(m.pid),
		envWorkerCLI+"="+sock)
	if xfer != "" {
		cmd.Env = append(cmd.Env, envWorkerXfer+"="+xfer)
	}
	cmd.Stdin = nil
	cmd.Stdout = os.Stdout
	// What the worker prints is also kept for show startup-logs.
	cmd.Stderr = io.MultiWriter(os.Stderr, logs)
	cmd.ExtraFiles = m.extra
	// A worker must not outlive its master, even one killed by SIGKILL:
	// it would hold the listeners and the test harness's output pipe.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	w := &worker{pid: cmd.Process.Pid, start: time.Now(), sock: sock, cmd: cmd}
	m.mu.Lock()
	if m.cur == nil {
		m.cur = w
	}
	m.mu.Unlock()
	go func() {
		err := cmd.Wait()
		m.exits <- workerExit{w: w, st: exitStatus(cmd.ProcessState, err)}
	}()
	return w, nil
}

// workerReady is closed once the worker has installed its signal handlers:
// a signal arriving before would find Go's default action (SIGINT fatal,
// SIGUSR1 ignored) instead of stopping it the way it should. The worker
// catches its signals before it opens its private CLI socket, so that
// socket is the sign; a worker without one gets workerStartGrace.
func (m *master) workerReady(w *worker) chan struct{} {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		path := w.sock
		for deadline := time.Now().Add(workerStartGrace); time.Now().Before(deadline); {
			if _, err := os.Stat(path); err == nil {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return ch
}

// inheritedFiles returns the descriptors from 3 up to the highest one this
// process inherited, for a child's ExtraFiles: ExtraFiles[i] becomes fd
// 3+i there, so an fd@N address names the same socket in the worker. The
// slots of closed descriptors and of our own close-on-exec ones (the Go
// runtime's, the master CLI's) get /dev/null, which keeps the numbering.
func inheritedFiles() []*os.File {
	var fds []int
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil
	}
	max := -1
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n < 3 {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(n), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue
		}
		fds = append(fds, n)
		if n > max {
			max = n
		}
	}
	if max < 3 {
		return nil
	}
	inherit := make(map[int]bool, len(fds))
	for _, n := range fds {
		inherit[n] = true
	}
	files := make([]*os.File, max-2)
	var null *os.File
	for n := 3; n <= max; n++ {
		if inherit[n] {
			files[n-3] = os.NewFile(uintptr(n), "fd@"+strconv.Itoa(n))
			continue
		}
		if null == nil {
			null, err = os.Open(os.DevNull)
			if err != nil {
				return files[:n-3]
			}
		}
		files[n-3] = null
	}
	return files
}

// exitStatus maps a worker's end to HAProxy's master exit code.
func exitStatus(ps *os.ProcessState, err error) int {
	if ps == nil {
		return 1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	if ps.ExitCode() >= 0 {
		return ps.ExitCode()
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return 1
	}
	return 0
}

func statusText(st int) string {
	if st > 128 && st < 128+65 {
		s := unix.SignalName(syscall.Signal(st - 128))
		switch s {
		case "SIGINT":
			return "Interrupt"
		case "SIGTERM":
			return "Terminated"
		case "SIGKILL":
			return "Killed"
		case "SIGSEGV":
			return "Segmentation fault"
		}
		// strsignal(3)'s words, which Go's are in lower case.
		return capitalize(syscall.Signal(st - 128).String())
	}
	return "Exit"
}

func (m *master) noticef(format string, a ...any) {
	m.logf("[NOTICE]   ", format, a...)
}

func (m *master) warnf(format string, a ...any) {
	m.logf("[WARNING]  ", format, a...)
}

func (m *master) alertf(format string, a ...any) {
	m.logf("[ALERT]    ", format, a...)
}

// listenMasterCLI opens one -S address: fd@N, a UNIX path (optionally
// unix@), ipv4@/ipv6@host:port, followed by comma-separated bind options
// of which mode is applied; user, group, uid, gid and level are accepted.
func listenMasterCLI(spec string) (net.Listener, error) {
	parts := strings.Split(spec, ",")
	addr := parts[0]
	var mode os.FileMode
	for i := 1; i < len(parts); i++ {
		switch parts[i] {
		case "mode":
			if i+1 >= len(parts) {
				return nil, fmt.Errorf("'mode' expects an octal value")
			}
			i++
			v, err := strconv.ParseUint(parts[i], 8, 32)
			if err != nil {
				return nil, fmt.Errorf("'mode' expects an octal value")
			}
			mode = os.FileMode(v)
		case "level", "user", "group", "uid", "gid", "severity-output":
			i++
		case "expose-fd":
			i++
		case "":
		default:
			return nil, fmt.Errorf("unknown keyword '%s'", parts[i])
		}
	}
	switch {
	case strings.HasPrefix(addr, "fd@"):
		n, err := strconv.Atoi(addr[3:])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("invalid fd")
		}
		f := os.NewFile(uintptr(n), addr)
		ln, err := net.FileListener(f)
		f.Close()
		return ln, err
	case strings.HasPrefix(addr, "ipv4@"):
		return net.Listen("tcp4", addr[5:])
	case strings.HasPrefix(addr, "ipv6@"):
		return net.Listen("tcp6", addr[5:])
	}
	path := strings.TrimPrefix(addr, "unix@")
	if path == "" {
		return nil, fmt.Errorf("missing address")
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		os.Remove(path)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if mode != 0 {
		if err := os.Chmod(path, mode); err != nil {
			ln.Close()
			return nil, err
		}
	}
	return ln, nil
}

func (m *master) serveCLI(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go m.session(c)
	}
}

const (
	masterCLITimeout = 10 * time.Second
	workerDialWait   = 3 * time.Second        // how long a new worker may take to open its socket
	workerStartGrace = 500 * time.Millisecond // see workerReady
)

const masterHelp = `  @<relative pid>                         : send a command to the <relative pid> process
  @!<pid>                                 : send a command to the <pid> process
  @master                                 : send a command to the master process
  reload                                  : reload haproxy
  show proc                               : show processes status
  show startup-logs                       : report logs emitted during HAProxy startup
  show version                            : show version of the current process
  help [<command>]                        : list matching or all commands
  prompt                                  : toggle interactive mode with prompt
  quit                                    : disconnect
`

// session runs one master CLI connection: one line and close, or, after
// `prompt`, line after line with the `master> ` prompt (`<pid>> ` while a
// worker is the session's target).
func (m *master) session(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	w := bufio.NewWriter(c)
	interactive := false
	target := "" // "" = master, otherwise a "@..." prefix
	// The session's modes, which every command sent to a worker turns on
	// there first, as 2.6's master CLI does.
	var expert, experimental bool
	for {
		c.SetReadDeadline(time.Now().Add(masterCLITimeout))
		line, err := r.ReadString('\n')
		if err != nil && line == "" {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		quit := false
		for _, cmd := range splitCommands(line) {
			words := strings.Fields(cmd)
			prefix, prefixed := target, false
			if len(words) > 0 && strings.HasPrefix(words[0], "@") {
				prefix, prefixed = words[0], true
				words = words[1:]
				if len(words) == 0 {
					// A bare prefix changes the session's target.
					if masterPrefix(prefix) {
						target = ""
					} else if _, ok := m.resolve(prefix); ok {
						target = prefix
					} else {
						fmt.Fprintf(w, "Can't find the target PID matching the prefix '%s'\n\n", prefix)
					}
					if !interactive {
						fmt.Fprint(w, "\n")
					}
					continue
				}
			}
			if len(words) > 0 && !prefixed && (words[0] == "expert-mode" || words[0] == "experimental-mode") {
				// The master answers nothing, whatever the session's
				// target: the mode is for the commands sent to workers.
				on := len(words) > 1 && words[1] == "on"
				if words[0] == "expert-mode" {
					expert = on
				} else {
					experimental = on
				}
				continue
			}
			if prefix != "" && !masterPrefix(prefix) {
				var modes []string
				if expert {
					modes = append(modes, "expert-mode on")
				}
				if experimental {
					modes = append(modes, "experimental-mode on")
				}
				m.forward(w, prefix, strings.Join(words, " "), modes)
				continue
			}
			switch strings.Join(words, " ") {
			case "prompt":
				interactive = !interactive
				if !interactive {
					fmt.Fprint(w, "\n")
					quit = true
				}
			case "quit":
				quit = true
			case "show proc":
				m.showProc(w)
				fmt.Fprint(w, "\n")
			case "reload":
				// The reply comes before the reload: the new worker's
				// start may take long, and its outcome is in show proc
				// and show startup-logs.
				select {
				case m.reloadReq <- struct{}{}:
				default:
				}
				fmt.Fprint(w, "\n")
			case "show startup-logs":
				m.mu.Lock()
				logs := m.logs
				m.mu.Unlock()
				fmt.Fprint(w, logs.String()+"\n")
			case "show version":
				fmt.Fprintf(w, "%s\n\n", core.Version)
			case "help":
				fmt.Fprint(w, "The following commands are valid at this level:\n"+masterHelp+"\n")
			default:
				if len(words) > 0 && words[0] == "help" {
					fmt.Fprint(w, "The following commands are valid at this level:\n"+masterHelp+"\n")
					break
				}
				fmt.Fprint(w, "Unknown command, but maybe one of the following ones is a better match:\n"+masterHelp+"\n")
			}
			if quit {
				break
			}
		}
		if !quit && interactive {
			name := "master"
			if pid, ok := m.resolve(target); ok && target != "" {
				name = strconv.Itoa(pid)
			}
			// 2.6 shows the session's modes: (x) experimental, (e) expert.
			switch {
			case experimental && expert:
				name += "(xe)"
			case experimental:
				name += "(x)"
			case expert:
				name += "(e)"
			}
			fmt.Fprint(w, name+"> ")
		}
		w.Flush()
		if quit || !interactive || err != nil {
			return
		}
	}
}

// splitCommands cuts a line at unescaped semicolons; a backslash keeps the
// next character.
func splitCommands(line string) []string {
	var out []string
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		switch ch := line[i]; {
		case ch == '\\' && i+1 < len(line):
			b.WriteByte(ch)
			i++
			b.WriteByte(line[i])
		case ch == ';':
			out = append(out, b.String())
			b.Reset()
		default:
			b.WriteByte(ch)
		}
	}
	return append(out, b.String())
}

// masterPrefix says whether a prefix names the master: "@", "@master"
// or the relative pid 0.
func masterPrefix(prefix string) bool {
	return prefix == "@" || prefix == "@master" || prefix == "@0"
}

// resolve maps a worker prefix to its pid: "@!<pid>" names any worker,
// old ones included; a relative pid "@<n>" (n > 0) is the current worker,
// as in 2.6, which has one relative pid per process no more.
func (m *master) resolve(prefix string) (int, bool) {
	w := m.target(prefix)
	if w == nil {
		return 0, false
	}
	return w.pid, true
}

func (m *master) target(prefix string) *worker {
	m.mu.Lock()
	defer m.mu.Unlock()
	if strings.HasPrefix(prefix, "@!") {
		n, err := strconv.Atoi(prefix[2:])
		if err != nil {
			return nil
		}
		for _, w := range append([]*worker{m.cur}, m.old...) {
			if w != nil && w.pid == n {
				return w
			}
		}
		return nil
	}
	n, err := strconv.Atoi(strings.TrimPrefix(prefix, "@"))
	if err != nil || n == 0 {
		return nil
	}
	return m.cur
}

// forward sends one command to the worker's private stats socket, after
// the commands that turn the session's modes on, and copies the command's
// reply (which ends with its own empty line).
func (m *master) forward(w io.Writer, prefix, cmd string, modes []string) {
	wk := m.target(prefix)
	if wk == nil {
		fmt.Fprintf(w, "Can't find the target PID matching the prefix '%s'\n\n", prefix)
		return
	}
	// A worker that has just started may not listen yet: retry a while.
	path := wk.sock
	var c net.Conn
	var err error
	for deadline := time.Now().Add(workerDialWait); ; {
		c, err = net.DialTimeout("unix", path, time.Second)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		fmt.Fprint(w, "Can't connect to the target CLI!\n\n")
		return
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(masterCLITimeout))
	line := strings.Join(append(modes, cmd), ";")
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		fmt.Fprint(w, "Can't connect to the target CLI!\n\n")
		return
	}
	if uc, ok := c.(*net.UnixConn); ok {
		uc.CloseWrite()
	}
	// Each mode command's reply is an empty line, which 2.6's worker
	// leaves out when its master asks (`expert-mode on -`).
	r := bufio.NewReader(c)
	for range modes {
		if b, err := r.ReadByte(); err != nil || b != '\n' {
			if err == nil {
				r.UnreadByte()
			}
			break
		}
	}
	io.Copy(w, r)
}

// showProc prints HAProxy 2.6's process table.
func (m *master) showProc(w io.Writer) {
	m.mu.Lock()
	cur := m.cur
	old := append([]*worker(nil), m.old...)
	reloads := fmt.Sprintf("%d [failed: %d]", m.reloads, m.failed)
	m.mu.Unlock()
	fmt.Fprintf(w, "%-15s %-15s %-15s %-15s %-15s\n", "#<PID>", "<type>", "<reloads>", "<uptime>", "<version>")
	fmt.Fprintf(w, "%-15d %-15s %-15s %-15s %s\n", m.pid, "master", reloads, uptime(time.Since(m.start)), core.Version)
	fmt.Fprintf(w, "# workers\n")
	if cur != nil {
		fmt.Fprintf(w, "%-15d %-15s %-15d %-15s %s\n", cur.pid, "worker", cur.reloads, uptime(time.Since(cur.start)), core.Version)
	}
	if len(old) > 0 {
		fmt.Fprintf(w, "# old workers\n")
		for _, o := range old {
			fmt.Fprintf(w, "%-15d %-15s %-15d %-15s %s\n", o.pid, "worker", o.reloads, uptime(time.Since(o.start)), core.Version)
		}
	}
	m.showPrograms(w)
}

// uptime renders a duration as 0d00h00m03s.
func uptime(d time.Duration) string {
	s := int(d / time.Second)
	return fmt.Sprintf("%dd%02dh%02dm%02ds", s/86400, s/3600%24, s/60%60, s%60)
}

// logf prints one master message, kept for show startup-logs too.
func (m *master) logf(tag, format string, a ...any) {
	line := fmt.Sprintf(tag+"(%d) : "+format+"\n", append([]any{m.pid}, a...)...)
	io.WriteString(m.logOut, line)
	m.mu.Lock()
	logs := m.logs
	m.mu.Unlock()
	if logs != nil {
		logs.Write([]byte(line))
	}
}
