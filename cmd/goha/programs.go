package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"goha/core"
)

// program is one running instance of a program section, which the master
// starts next to its workers as HAProxy 2.6's does.
type program struct {
	name    string
	pid     int       // 0: it could not be executed
	cmd     *exec.Cmd // nil: it could not be executed
	reloads int       // reloads it has lived through
	start   time.Time
}

// programExit is a program's end, as the master's loop learns it.
type programExit struct {
	p  *program
	st int
}

// startPrograms starts the configuration's programs. On a reload
// (running holds the instances of the previous configuration), a program
// whose section says `no option start-on-reload` and which still runs
// goes on; the others start anew and the instances they replace, like
// those of sections gone, are returned to be stopped.
func (m *master) startPrograms(progs []*core.Program, running []*program) (cur, leaving []*program) {
	byName := map[string]*program{}
	for _, p := range running {
		byName[p.name] = p
	}
	for _, cp := range progs {
		if old := byName[cp.Name]; old != nil && !cp.StartOnReload {
			delete(byName, cp.Name)
			cur = append(cur, old)
			continue
		}
		p, err := m.startProgram(cp)
		if err != nil {
			// HAProxy's forked child fails to execute and exits 1: the
			// master sees a current program end (exit-on-failure).
			msg := err.Error()
			var errno syscall.Errno
			if errors.As(err, &errno) {
				msg = capitalize(errno.Error())
			}
			m.alertf("Cannot execute %s: %s", cp.Command[0], msg)
			p = &program{name: cp.Name, start: time.Now()}
			cur = append(cur, p)
			go func() { m.progExits <- programExit{p: p, st: 1} }()
			continue
		}
		m.noticef("New program '%s' (%d) forked", cp.Name, p.pid)
		cur = append(cur, p)
	}
	for _, p := range running {
		if byName[p.name] == p {
			leaving = append(leaving, p)
		}
	}
	return cur, leaving
}

func (m *master) startProgram(cp *core.Program) (*program, error) {
	cmd := exec.Command(cp.Command[0], cp.Command[1:]...)
	cmd.Stdin = nil
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	// As in HAProxy, the identity changes only when the section asks,
	// and the supplementary groups go only with a group.
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if cp.UID != -1 || cp.GID != -1 {
		cred := &syscall.Credential{Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid()), NoSetGroups: cp.GID == -1}
		if cp.UID != -1 {
			cred.Uid = uint32(cp.UID)
		}
		if cp.GID != -1 {
			cred.Gid = uint32(cp.GID)
		}
		attr.Credential = cred
	}
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &program{name: cp.Name, pid: cmd.Process.Pid, start: time.Now(), cmd: cmd}
	go func() {
		err := cmd.Wait()
		m.progExits <- programExit{p: p, st: exitStatus(cmd.ProcessState, err)}
	}()
	return p, nil
}

// reloadPrograms applies the programs of the configuration as it is now,
// once a reload's new worker serves: the instances that leave get
// SIGUSR1, as HAProxy's new worker sends them with -sf.
func (m *master) reloadPrograms() {
	var progs []*core.Program
	if proc, _ := loadConfig(m.opts); proc != nil && proc.Conf != nil && proc.Conf.ParseAlerts == 0 {
		progs = proc.Conf.Programs
	}
	m.mu.Lock()
	running := m.progs
	for _, p := range running {
		p.reloads++
	}
	for _, p := range m.oldProgs {
		p.reloads++
	}
	m.mu.Unlock()
	cur, leaving := m.startPrograms(progs, running)
	m.mu.Lock()
	m.progs = cur
	m.oldProgs = append(m.oldProgs, leaving...)
	m.mu.Unlock()
	for _, p := range leaving {
		if p.cmd != nil {
			p.cmd.Process.Signal(syscall.SIGUSR1)
		}
	}
}

// programExited reports a program's end in HAProxy's words. It returns
// true when the master must stop everything: a current program failed
// (exit-on-failure).
func (m *master) programExited(ex programExit) bool {
	m.mu.Lock()
	current := false
	for i, p := range m.progs {
		if p == ex.p {
			m.progs = append(m.progs[:i], m.progs[i+1:]...)
			current = true
			break
		}
	}
	for i, p := range m.oldProgs {
		if p == ex.p {
			m.oldProgs = append(m.oldProgs[:i], m.oldProgs[i+1:]...)
			break
		}
	}
	m.mu.Unlock()
	if !current {
		m.warnf("Former program '%s' (%d) exited with code %d (%s)", ex.p.name, ex.p.pid, ex.st, statusText(ex.st))
		return false
	}
	m.alertf("Current program '%s' (%d) exited with code %d (%s)", ex.p.name, ex.p.pid, ex.st, statusText(ex.st))
	if ex.st != 0 && ex.st != 130 && ex.st != 143 && !m.noExitOnFailure {
		m.alertf("exit-on-failure: killing every processes with SIGTERM")
		m.mu.Lock()
		if m.exitCode == 0 {
			m.exitCode = ex.st
		}
		m.mu.Unlock()
		return true
	}
	return false
}

// showPrograms prints show proc's program lines.
func (m *master) showPrograms(w io.Writer) {
	m.mu.Lock()
	cur := append([]*program(nil), m.progs...)
	old := append([]*program(nil), m.oldProgs...)
	m.mu.Unlock()
	line := func(p *program) {
		fmt.Fprintf(w, "%-15d %-15s %-15d %-15s %-15s\n", p.pid, p.name, p.reloads, uptime(time.Since(p.start)), "-")
	}
	fmt.Fprintf(w, "# programs\n")
	for _, p := range cur {
		line(p)
	}
	if len(old) > 0 {
		fmt.Fprintf(w, "# old programs\n")
		for _, p := range old {
			line(p)
		}
	}
}
