package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// IO is where the runners read and write. In and Out are also examined as
// terminals (watch needs one).
type IO struct {
	In  *os.File
	Out io.Writer
	Err io.Writer
	// OutFd is the descriptor of Out when it is a terminal, for its size.
	OutFd int
}

// commandFromArgs builds a command from words the invoking shell already
// split. A single argument is parsed as a gohactl line (so
// `gohactl "show stat | where status=UP"` works); several are taken as the
// words themselves, and a word "|" starts a pipe stage.
//
// watch follows the same rule for the command it repeats:
// `gohactl watch 1 "show stat | cols svname,scur"`.
func commandFromArgs(args []string) ([]Command, error) {
	if len(args) == 1 {
		return ParseLine(args[0])
	}
	if args[0] == "watch" && len(args) == 3 {
		cmds, err := ParseLine(args[2])
		if err != nil {
			return nil, err
		}
		if len(cmds) != 1 {
			return nil, fmt.Errorf("%w: watch repeats one command", ErrSyntax)
		}
		cmds[0].Words = append([]string{"watch", args[1]}, cmds[0].Words...)
		return cmds, nil
	}
	var cmd Command
	cur := &cmd.Words
	for _, a := range args {
		if a == "|" {
			cmd.Stages = append(cmd.Stages, nil)
			cur = &cmd.Stages[len(cmd.Stages)-1]
			continue
		}
		*cur = append(*cur, a)
	}
	for _, st := range cmd.Stages {
		if len(st) == 0 {
			return nil, fmt.Errorf("%w: empty pipe stage", ErrSyntax)
		}
	}
	return []Command{cmd}, nil
}

// isQuit recognises the commands that end a script or the shell; "quit"
// is not sent, since the server would only close the connection.
func isQuit(cmd Command) bool {
	return len(cmd.Words) == 1 && len(cmd.Stages) == 0 && (cmd.Words[0] == "quit" || cmd.Words[0] == "exit")
}

func hasPayload(cmd Command) bool {
	return len(cmd.Words) > 0 && cmd.Words[len(cmd.Words)-1] == "<<"
}

// readPayload reads payload lines until an empty line or the end of input.
func readPayload(next func() (string, bool)) []string {
	lines := []string{}
	for {
		l, ok := next()
		if !ok || l == "" {
			return lines
		}
		lines = append(lines, l)
	}
}

// RunArgs runs the command given on gohactl's command line and returns the
// exit status. A command ending in "<<" takes its payload from standard
// input.
func RunArgs(s *Session, args []string, std IO) int {
	cmds, err := commandFromArgs(args)
	if err != nil {
		fmt.Fprintf(std.Err, "%s\n", Message(err))
		return ExitUsage
	}
	sc := bufio.NewScanner(std.In)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	next := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		return strings.TrimSuffix(sc.Text(), "\r"), true
	}
	status := ExitOK
	for _, c := range cmds {
		var code int
		switch {
		case isQuit(c):
			return status
		case c.Words[0] == "watch":
			code = s.Watch(c.Words[1:], c.Stages, int(std.In.Fd()), std.OutFd, std.Out, std.Err)
		case hasPayload(c):
			code = s.Run(c, readPayload(next), std.Out, std.Err)
		default:
			code = s.Run(c, nil, std.Out, std.Err)
		}
		status = max(status, code)
		if code == ExitTransport {
			break
		}
	}
	return status
}

// RunScript reads commands from r, one line each in gohactl's syntax, runs
// them on one connection and prints each reply. A line whose command ends in
// "<<" is followed by its payload and an empty line. The status is the worst
// of all commands'; a broken connection is reopened for the next line.
func RunScript(s *Session, r io.Reader, out, errOut io.Writer) int {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	next := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		return strings.TrimSuffix(sc.Text(), "\r"), true
	}
	status := ExitOK
	for {
		l, ok := next()
		if !ok {
			break
		}
		cmds, err := ParseLine(l)
		if err != nil {
			fmt.Fprintf(errOut, "%s\n", Message(err))
			status = max(status, ExitUsage)
			continue
		}
		for i, c := range cmds {
			var payload []string
			if i == len(cmds)-1 && hasPayload(c) {
				payload = readPayload(next)
			}
			if isQuit(c) {
				return status
			}
			var code int
			switch c.Words[0] {
			case "watch":
				fmt.Fprintf(errOut, "gohactl: watch needs a terminal\n")
				code = ExitUsage
			default:
				code = s.Run(c, payload, out, errOut)
			}
			status = max(status, code)
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(errOut, "gohactl: reading commands: %v\n", err)
		status = max(status, ExitUsage)
	}
	return status
}
