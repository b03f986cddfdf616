// Command gohactl is an admin shell for the stats socket of goha or HAProxy.
//
//	gohactl [-S <path|host:port>] [-f <haproxy.cfg>] [-t <timeout>] [-max-reply <bytes>] [command ...]
//
// With a command it runs it and exits; with standard input not a terminal it
// runs one command per input line; otherwise it opens an interactive shell.
// See docs/admin-shell.md.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"goha/cli"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("gohactl", flag.ContinueOnError)
	sock := fs.String("S", "", "stats socket: a UNIX socket path or host:port (also unix@, ipv4@, abns@ forms)")
	cfg := fs.String("f", "", "configuration file whose first global \"stats socket\" to use")
	timeout := fs.Duration("t", cli.DefaultTimeout, "how long to wait to connect, and for each part of a reply")
	maxReply := fs.String("max-reply", "64M", "largest reply accepted, in bytes (suffixes k, M, G)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `usage: gohactl [-S <path|host:port>] [-f <haproxy.cfg>] [-t <timeout>] [-max-reply <size>] [command ...]

Runs the command and exits; with no command, reads one command per line from
standard input, or opens an interactive shell on a terminal. The socket is
taken from -S, else from -f, else from $%s.
Exit status: 0 success, 1 the server answered an error, 2 usage or syntax
error, 3 connection or protocol failure.

`, cli.EnvSocket)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cli.ExitOK
		}
		return cli.ExitUsage
	}
	limit, err := parseSize(*maxReply)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gohactl: -max-reply: %v\n", err)
		return cli.ExitUsage
	}
	addr, err := resolveSocket(*sock, *cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, cli.Message(err))
		return cli.ExitUsage
	}
	s := cli.NewSession(cli.Options{Addr: addr, Timeout: *timeout, MaxReply: limit})
	s.Notice = os.Stderr
	defer s.Close()

	outFd := int(os.Stdout.Fd())
	switch {
	case fs.NArg() > 0:
		return cli.RunArgs(s, fs.Args(), cli.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, OutFd: outFd})
	case cli.IsTerminal(os.Stdin) && cli.IsTerminal(os.Stdout):
		s.Notice = os.Stdout
		return cli.RunShell(s, outFd, os.Stdout)
	default:
		return cli.RunScript(s, os.Stdin, os.Stdout, os.Stderr)
	}
}

// resolveSocket applies the order -S, -f, $GOHA_SOCKET.
func resolveSocket(flagS, cfg string) (string, error) {
	if flagS != "" {
		return flagS, nil
	}
	if cfg != "" {
		return cli.SocketFromConfig(cfg)
	}
	if env := os.Getenv(cli.EnvSocket); env != "" {
		return env, nil
	}
	return "", fmt.Errorf("%w: use -S <path|host:port>, -f <config> or set %s", cli.ErrNoSocket, cli.EnvSocket)
}

func parseSize(s string) (int, error) {
	mult := 1
	switch {
	case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
		mult, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "M"), strings.HasSuffix(s, "m"):
		mult, s = 1<<20, s[:len(s)-1]
	case strings.HasSuffix(s, "G"), strings.HasSuffix(s, "g"):
		mult, s = 1<<30, s[:len(s)-1]
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}
