// Command goha is a load balancer and reverse proxy that reads HAProxy's
// configuration language and answers HAProxy's runtime API.
package main

import (
	"errors"
	"fmt"
	"goha/core/stream"
	"io"
	"os"
	"os/exec"
	"os/signal"
	goruntime "runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"goha/core"
	"goha/core/config"
	"goha/core/diag"
	"goha/ring"
	"goha/runtime"
)

// features are what `feature()`, `-cc` and -vv report, in HAProxy's
// build-option names: "+NAME" for what goha has, "-NAME" for what HAProxy
// builds commonly have and goha does not, so that configurations and
// reg-tests guarded by a feature skip what goha cannot do. OPENSSL stands
// for TLS termination and origination (Go's crypto/tls).
var features = []string{"+EPOLL", "+THREAD", "+OPENSSL", "+ACCEPT4",
	"+LINUX_SPLICE", "-TPROXY", "-LINUX_TPROXY", "-CRYPT_H", "-LIBCRYPT",
	"-TFO", "-NS", "-CPU_AFFINITY", "+ZLIB", "-SLZ", "-LUA", "-PCRE", "-QUIC",
	"-PROMEX", "-DEVICEATLAS", "-51DEGREES", "-WURFL", "+SYSTEMD"}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "[ALERT]    (%d) : config : %v\n", os.Getpid(), err)
		printUsage(stderr)
		return 1
	}
	switch o.version {
	case 1:
		printVersion(stdout)
		return 0
	case 2:
		printVersion(stdout)
		printBuildOptions(stdout)
		return 0
	}
	if o.condSet {
		ok, err := config.EvalCondition(o.cond, condOptions())
		if err != nil {
			// HAProxy exits 2 when the condition cannot be evaluated.
			fmt.Fprintf(stderr, "[ALERT]    (%d) : config : %v\n", os.Getpid(), err)
			return 2
		}
		if ok {
			return 0
		}
		return 1
	}
	var sigs chan os.Signal
	if !o.check {
		// The signals are caught from the start: a stop requested while
		// the configuration loads (a test harness stopping a process it
		// has just started) is handled once serving starts, instead of
		// finding Go's default action (SIGINT fatal, SIGUSR1 ignored).
		sigs = make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGUSR1, syscall.SIGTTOU, syscall.SIGTTIN)
	}
	if o.chdir != "" {
		// -C: the files (and what they name) are read from there.
		if err := os.Chdir(o.chdir); err != nil {
			why := err.Error()
			var errno syscall.Errno
			if errors.As(err, &errno) {
				// strerror's words, as HAProxy prints them.
				why = errno.Error()
				why = capitalize(why)
			}
			fmt.Fprintf(stderr, "[ALERT]    (%d) : Could not change to directory %s : %s\n", os.Getpid(), o.chdirArg, why)
			return 1
		}
	}
	var demo *demoSetup
	if len(o.files) == 0 {
		if o.check {
			fmt.Fprintf(stderr, "[ALERT]    (%d) : No configuration file specified.\n", os.Getpid())
			return 1
		}
		demo, err = startDemo()
		if err != nil {
			fmt.Fprintf(stderr, "[ALERT]    (%d) : demo: %v\n", os.Getpid(), err)
			return 1
		}
		defer demo.Close()
		o.files = []string{demo.cfgPath}
		o.foreground = true // access logs go to stdout through the demo's `log stdout`
	}
	proc, d := loadConfig(o)
	pid := os.Getpid()
	if !o.quiet || d.HasAlert() {
		min := diag.Notice
		if o.diagMode {
			min = diag.Diagnostic
		}
		d.PrintFrom(stderr, pid, min)
	}
	// What start-up printed is kept for `show startup-logs`.
	startup := ring.NewStartupLogs()
	for _, x := range d.All() {
		startup.Write([]byte(x.Line(pid)))
	}
	if d.HasAlert() {
		fmt.Fprintf(stderr, "[ALERT]    (%d) : config : Fatal errors found in configuration.\n", pid)
		return 1
	}
	cfg := proc.Conf
	if o.check {
		if d.Count(diag.Warning) > 0 {
			if cfg.Global.ZeroWarning {
				return 1
			}
			if !o.quiet {
				fmt.Fprintln(stdout, "Warnings were found.")
			}
		}
		if !cfg.HasListener() {
			if !o.quiet {
				fmt.Fprintln(stdout, "Configuration file has no error but will not start (no listener) => exit(2).")
			}
			return 2
		}
		if !o.quiet {
			fmt.Fprintln(stdout, "Configuration file is valid")
		}
		return 0
	}
	if !cfg.HasListener() {
		fmt.Fprintf(stderr, "[ALERT]    (%d) : [goha.main()] No enabled listener found (check for 'bind' directives) ! Exiting.\n", pid)
		return 1
	}
	if (o.daemon || cfg.Global.Daemon) && !o.foreground && os.Getenv("GOHA_DAEMONIZED") == "" {
		return daemonize(o, stderr)
	}
	if (o.master || cfg.Global.MasterWorker) && os.Getenv(envWorker) == "" {
		// The master catches its own signals: one that came while the
		// configuration loaded stops it now.
		select {
		case <-sigs:
			return 0
		default:
			signal.Stop(sigs)
		}
	}
	if code, done := masterWorker(o, cfg, stderr); done {
		return code
	}
	proc.StartupLogs = startup
	return serve(o, proc, demo, sigs, stdout, stderr)
}

func condOptions() config.Options {
	return config.Options{Version: core.Version, Features: features}
}

// loadConfig reads the configuration and prepares the process that will run
// it (what `-c` checks is what runs): the process is nil when the files
// could not be read into sections.
func loadConfig(o *options) (*stream.Process, *diag.Collector) {
	files := o.files
	d := &diag.Collector{}
	sections := config.Load(files, condOptions(), d)
	if d.HasAlert() {
		// HAProxy stops at the tokenizer's errors: the sections may be
		// incomplete, and building them would only add noise.
		for _, f := range files {
			d.Add(diag.Diag{Sev: diag.Alert, Msg: "Error(s) found in configuration file : " + f})
		}
		return nil, d
	}
	cfg := core.BuildWith(sections, d, core.BuildOptions{LocalPeer: o.localPeer, MaxConn: o.maxConn, ResolveDontFail: o.resolveDontFail, MasterWorker: o.master})
	if cfg.ParseAlerts > 0 {
		for _, f := range files {
			d.Add(diag.Diag{Sev: diag.Alert, Msg: "Error(s) found in configuration file : " + f})
		}
		return stream.New(cfg), d
	}
	proc := stream.New(cfg)
	pd := &diag.Collector{}
	proc.Prepare(pd)
	return proc, withPrepared(d, cfg.ParseDiags, pd, files)
}

// withPrepared places what Prepare reported where HAProxy reports it: the
// rules and formats it compiles are parsed with their lines in HAProxy, so
// their diagnostics join the reading's in line order, and an alert among
// them stops the load before the checks that follow reading, whose
// diagnostics are then dropped, as HAProxy never runs those checks. Log
// formats are read after the sections in HAProxy too: what they report
// comes last.
func withPrepared(d *diag.Collector, parsed int, pd *diag.Collector, files []string) *diag.Collector {
	all, prep := d.All(), pd.All()
	merged := append([]diag.Diag(nil), all[:parsed]...)
	var loose []diag.Diag
	stops := false // an alert at a line: HAProxy's reading would have failed
	for _, p := range prep {
		if p.Pos.IsZero() {
			// Log formats: HAProxy reads them after the sections, with
			// the other checks, so these stay after theirs.
			loose = append(loose, p)
			continue
		}
		stops = stops || p.Sev == diag.Alert && !p.Continue
		at := len(merged)
		for i, q := range merged {
			if q.Pos.File == p.Pos.File && q.Pos.Line > p.Pos.Line {
				at = i
				break
			}
		}
		merged = append(merged[:at], append([]diag.Diag{p}, merged[at:]...)...)
	}
	out := &diag.Collector{}
	for _, x := range merged {
		out.Add(x)
	}
	if stops {
		for _, x := range loose {
			out.Add(x)
		}
		for _, f := range files {
			out.Add(diag.Diag{Sev: diag.Alert, Msg: "Error(s) found in configuration file : " + f})
		}
		return out
	}
	for _, x := range all[parsed:] {
		out.Add(x)
	}
	for _, x := range loose {
		out.Add(x)
	}
	return out
}

func printVersion(w io.Writer) {
	fmt.Fprintf(w, "HAProxy version %s %s - goha, a Go load balancer speaking HAProxy's language\n", core.Version, core.ReleaseDate)
	fmt.Fprintf(w, "Status: goha development branch.\n")
	fmt.Fprintf(w, "Running on: %s %s\n", goruntime.GOOS, goruntime.GOARCH)
}

func printBuildOptions(w io.Writer) {
	fmt.Fprintf(w, "Build options :\n  TARGET  = linux-glibc\n  CPU     = generic\n  CC      = %s\n  CFLAGS  = \n  OPTIONS = \n\n", goruntime.Version())
	fmt.Fprintf(w, "Feature list : %s\n\n", strings.Join(features, " "))
	fmt.Fprintf(w, "Default settings :\n  bufsize = 16384, maxrewrite = 1024, maxpollevents = 200\n\n")
	fmt.Fprintf(w, "Built with multi-threading support (MAX_THREADS=4096, default=%d).\n", goruntime.NumCPU())
	fmt.Fprintf(w, "Built with Go %s.\n", goruntime.Version())
	// ZLIB in the feature list: zlib's formats, made by Go's packages.
	fmt.Fprintf(w, "Built with Go's compress packages for zlib's formats (no zlib library).\n")
	fmt.Fprintf(w, "Compression algorithms supported : identity(\"identity\"), deflate(\"deflate\"), raw-deflate(\"deflate\"), gzip(\"gzip\")\n\n")
	fmt.Fprintf(w, "Available polling systems :\n      epoll : pref=300,  test result OK\n\n")
	fmt.Fprintf(w, "Available multiplexer protocols :\n              h1 : mode=HTTP  side=FE|BE  mux=H1  flags=HTX|NO_UPG\n       <default> : mode=TCP   side=FE|BE  mux=PASS flags=\n\n")
	fmt.Fprintf(w, "Available services : none\n\nAvailable filters :\n\t[COMP] compression\n")
}

// daemonize starts a detached copy of this process and returns at once, as
// -D does (Go cannot fork, so the child is a fresh exec of the same binary).
func daemonize(o *options, stderr io.Writer) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "[ALERT]    (%d) : cannot find own executable: %v\n", os.Getpid(), err)
		return 1
	}
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Env = append(os.Environ(), "GOHA_DAEMONIZED=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// Inherited descriptors (fd@N binds) stay open: the child sees the
	// same numbers because ExtraFiles keeps 3.. in order.
	for fd := 3; fd < 64; fd++ {
		f := os.NewFile(uintptr(fd), "")
		if f == nil {
			break
		}
		if _, err := f.Stat(); err != nil {
			break
		}
		cmd.ExtraFiles = append(cmd.ExtraFiles, f)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "[ALERT]    (%d) : cannot daemonize: %v\n", os.Getpid(), err)
		return 1
	}
	if o.pidFile != "" {
		writePid(o.pidFile, cmd.Process.Pid)
	}
	return 0
}

func writePid(path string, pid int) error {
	return os.WriteFile(path, []byte(strconv.Itoa(pid)+"\n"), 0o644)
}

// serve runs the configuration until a signal stops it.
func serve(o *options, proc *stream.Process, demo *demoSetup, sigs chan os.Signal, stdout, stderr io.Writer) int {
	cfg := proc.Conf
	if !o.quiet {
		core.SetEventOutput(stderr)
	}
	stopProfile := startProfile()
	defer stopProfile()
	// A state saved with `show servers state` applies before traffic.
	for _, err := range runtime.LoadServerStateFiles(cfg) {
		fmt.Fprintf(stderr, "[WARNING]  (%d) : %v\n", os.Getpid(), err)
	}
	var report func(from, to int, used, idle float64)
	if o.debug {
		report = func(from, to int, used, idle float64) {
			fmt.Fprintf(stderr, "[NOTICE]   (%d) : scheduler threads %d -> %d (process used %.2f CPUs, %.2f CPUs idle)\n",
				os.Getpid(), from, to, used, idle)
		}
	}
	stopGovernor := setSchedulerThreads(cfg.Global.NbThread, os.Getenv("GOMAXPROCS"), report)
	defer stopGovernor()
	if o.debug {
		proc.LogOut = stderr
	}
	xfer := o.xferSock
	inWorker := os.Getenv(envWorker) != ""
	if x := os.Getenv(envWorkerXfer); inWorker && x != "" {
		xfer = x
	}
	// HAProxy goes on without the old sockets only under a master.
	if !takeOldSockets(proc, xfer, stderr) && !inWorker {
		return 1
	}
	if err := proc.Run(); err != nil {
		fmt.Fprintf(stderr, "[ALERT]    (%d) : %v\n", proc.PID, err)
		proc.Stop()
		return 1
	}
	if _, err := runtime.Serve(proc); err != nil {
		fmt.Fprintf(stderr, "[ALERT]    (%d) : %v\n", proc.PID, err)
		proc.Stop()
		return 1
	}
	pidFile := o.pidFile
	if pidFile == "" {
		pidFile = cfg.Global.PidFile
	}
	if pidFile != "" {
		if err := writePid(pidFile, proc.PID); err != nil {
			fmt.Fprintf(stderr, "[ALERT]    (%d) : cannot create pidfile %s\n", proc.PID, pidFile)
		}
		defer removeOwnPid(pidFile, proc.PID)
	}
	// Every socket is bound and the pid file written: the process can
	// take the identity it is configured with, as HAProxy does here.
	warn, err := dropPrivileges(&cfg.Global)
	if warn != "" {
		fmt.Fprintf(stderr, "[WARNING]  (%d) : %s\n", proc.PID, warn)
	}
	if err != nil {
		fmt.Fprintf(stderr, "[ALERT]    (%d) : %v\n", proc.PID, err)
		proc.Stop()
		return 1
	}
	// A worker started by a reload leaves the previous worker to its
	// master: the -sf/-st pids of the command line were the first start's,
	// and may name other processes by now.
	if !(inWorker && os.Getenv(envWorkerXfer) != "") {
		for _, p := range o.softStop {
			syscall.Kill(p, syscall.SIGUSR1)
		}
		for _, p := range o.hardStop {
			syscall.Kill(p, syscall.SIGTERM)
		}
	}
	if demo != nil {
		demo.announce(stdout, proc)
	}
	for sig := range sigs {
		if sig == syscall.SIGTTOU || sig == syscall.SIGTTIN {
			if pauseResume(proc, sig == syscall.SIGTTOU, stderr) {
				continue
			}
			// A listener that cannot pause: HAProxy stops softly.
			sig = syscall.SIGUSR1
		}
		switch sig {
		case syscall.SIGUSR1:
			fmt.Fprintf(stderr, "[WARNING]  (%d) : Stopping frontends and proxies (soft-stop).\n", proc.PID)
			proc.SoftStop(cfg.Global.HardStopAfter)
			proc.Stop()
			return 0
		case syscall.SIGINT:
			// Bounded: VTest sends SIGTERM 2 s after SIGINT and then
			// expects to see that signal, not SIGINT's.
			stopWithin(proc, time.Second)
			if pidFile != "" {
				removeOwnPid(pidFile, proc.PID)
			}
			// HAProxy in the foreground dies by SIGINT; test runners
			// (VTest) accept exactly that.
			signal.Reset(syscall.SIGINT)
			syscall.Kill(os.Getpid(), syscall.SIGINT)
			time.Sleep(time.Second)
			return 130
		default:
			// SIGTERM stops at once: stopping must not wait on a stream
			// or a peer that does not answer.
			stopWithin(proc, 2*time.Second)
			return 0
		}
	}
	return 0
}

// stopWithin runs proc.Stop, giving up after d.
func stopWithin(proc *stream.Process, d time.Duration) {
	done := make(chan struct{})
	go func() { proc.Stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}
