package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
)

// options are the command-line settings, spelled as HAProxy spells them.
type options struct {
	files           []string
	check           bool     // -c
	debug           bool     // -d: foreground with access logs on stderr
	diagMode        bool     // -dD: also print diagnostic-level remarks
	foreground      bool     // -d, -db: stay in the foreground
	daemon          bool     // -D
	master          bool     // -W
	systemd         bool     // -Ws: notify systemd
	xferSock        string   // -x: the old process's stats socket
	masterCLI       []string // -S
	pidFile         string   // -p
	softStop        []int    // -sf
	hardStop        []int    // -st
	cond            string   // -cc
	condSet         bool
	version         int  // -v = 1, -vv = 2
	quiet           bool // -q
	noFeatures      []string
	localPeer       string // -L
	chdir           string // -C, made absolute
	chdirArg        string // -C as given, for messages
	maxConn         int    // -n, 0 when not given
	resolveDontFail bool   // -dr
}

const usage = `Usage : goha [-f <cfgfile|cfgdir>]* [ -vdVD ] [ -n <maxconn> ] [ -N <maxpconn> ]
        [ -p <pidfile> ] [ -m <max megs> ] [ -C <dir> ] [-- <cfgfile>*]
        -v displays version ; -vv shows known build options.
        -d enters debug mode ; -db only disables background mode.
        -dM[<byte>,help,...] debug memory (default: poison with <byte>/0x50)
        -V enters verbose mode (disables quiet mode)
        -D goes daemon ; -C changes to <dir> before loading files.
        -W master-worker mode.
        -q quiet mode : don't display messages
        -c check mode : only check config files and exit
        -cc check condition : evaluate a condition and exit
        -n sets the maximum total # of connections (uses ulimit -n)
        -p writes pids of all children to this file
        -dr ignores server address resolution failures
        -sf/-st [pid ]* finishes/terminates old pids.
        -x <unix_socket> get listening sockets from a unix socket
        -S <bind>[,<bind options>...] new master CLI
`

// parseArgs reads HAProxy's flags. It returns an error (and the caller
// prints the usage and exits 1) on anything it does not know.
func parseArgs(args []string) (*options, error) {
	o := &options{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() (string, error) {
			if i+1 >= len(args) {
				return "", fmt.Errorf("option '%s' requires an argument", a)
			}
			i++
			return args[i], nil
		}
		switch {
		case a == "--":
			o.files = append(o.files, args[i+1:]...)
			return o, nil
		case a == "-f":
			v, err := next()
			if err != nil {
				return nil, err
			}
			o.files = append(o.files, v)
		case a == "-c":
			o.check = true
		case a == "-cc":
			v, err := next()
			if err != nil {
				return nil, err
			}
			o.cond, o.condSet = v, true
		case a == "-d":
			o.debug, o.foreground = true, true
		case a == "-db":
			o.foreground = true
		case a == "-dD":
			o.diagMode = true
		case a == "-dr":
			o.resolveDontFail = true
		case strings.HasPrefix(a, "-d") && len(a) > 2:
			// -dM, -dI, -dW, -dV ...: debugging switches; accepted,
			// they change nothing in goha.
		case a == "-D":
			o.daemon = true
		case a == "-W", a == "-Ws":
			o.master = true
			o.systemd = a == "-Ws"
		case a == "-x":
			v, err := next()
			if err != nil {
				return nil, err
			}
			o.xferSock = v
		case a == "-S":
			v, err := next()
			if err != nil {
				return nil, err
			}
			o.masterCLI = append(o.masterCLI, v)
		case a == "-p":
			v, err := next()
			if err != nil {
				return nil, err
			}
			o.pidFile = v
		case a == "-sf", a == "-st":
			for i+1 < len(args) {
				n, err := strconv.Atoi(args[i+1])
				if err != nil {
					break
				}
				if a == "-sf" {
					o.softStop = append(o.softStop, n)
				} else {
					o.hardStop = append(o.hardStop, n)
				}
				i++
			}
		case a == "-v":
			o.version = 1
		case a == "-vv":
			o.version = 2
		case a == "-q":
			o.quiet = true
		case a == "-V":
			o.quiet = false
		case a == "-L", a == "-C":
			v, err := next()
			if err != nil {
				return nil, err
			}
			if a == "-L" {
				o.localPeer = v
			} else {
				// Absolute, so that a daemon or worker started again
				// with the same arguments, from the new directory,
				// lands in the same place.
				o.chdir, o.chdirArg = v, v
				if abs, err := filepath.Abs(v); err == nil {
					o.chdir = abs
				}
			}
		case a == "-n":
			v, err := next()
			if err != nil {
				return nil, err
			}
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("option '-n' expects a positive number, got '%s'", v)
			}
			o.maxConn = n
		case a == "-N", a == "-m":
			// -N (default per-proxy maxconn) and -m (a memory cap Go
			// cannot enforce) would change what goha does: refused
			// rather than ignored.
			if _, err := next(); err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("option '%s' is not supported by goha", a)
		default:
			return nil, fmt.Errorf("unknown option '%s'", a)
		}
	}
	return o, nil
}

func printUsage(w io.Writer) { fmt.Fprint(w, usage) }
