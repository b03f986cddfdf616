package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/peterh/liner"
)

// ShellPrompt is the interactive shell's prompt; PayloadPrompt is shown
// while a "<<" payload is typed.
const (
	ShellPrompt   = "gohactl> "
	PayloadPrompt = "+ "
)

// HistoryPath is where the shell keeps its history:
// $XDG_STATE_HOME/gohactl/history, or ~/.local/state/gohactl/history.
func HistoryPath() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "gohactl", "history"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cli: no place for the history: %w", err)
	}
	return filepath.Join(home, ".local", "state", "gohactl", "history"), nil
}

const localHelp = `gohactl commands:
  watch <seconds> <command> [| stage ...]  redraw a command's reply until a key is pressed
  exit, quit, Ctrl-D                       leave the shell
  <command> <<                             type a payload; an empty line ends it
`

// RunShell runs the interactive shell on the terminal and returns the exit
// status: that of the last command.
func RunShell(s *Session, outFd int, out io.Writer) int {
	if err := s.Connect(); err != nil {
		fmt.Fprintf(out, "%s\n", Message(err))
		return ExitTransport
	}
	defer s.Close()
	ln := liner.NewLiner()
	defer ln.Close()
	ln.SetCtrlCAborts(true)
	ln.SetTabCompletionStyle(liner.TabPrints)
	ln.SetWordCompleter(s.Complete)

	hist, herr := HistoryPath()
	if herr == nil {
		if f, err := os.Open(hist); err == nil {
			ln.ReadHistory(f)
			f.Close()
		}
	} else {
		fmt.Fprintf(out, "%s\n", Message(herr))
	}
	saveHistory := func() {
		if hist == "" {
			return
		}
		if err := os.MkdirAll(filepath.Dir(hist), 0o700); err != nil {
			return
		}
		tmp := hist + ".tmp"
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return
		}
		_, werr := ln.WriteHistory(f)
		if cerr := f.Close(); werr == nil && cerr == nil {
			os.Rename(tmp, hist)
		}
	}

	// Ctrl-C while a command runs abandons it: the reply would arrive
	// later on this connection out of step, so the connection goes too.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	guard := func(run func() int) int {
		for len(sigs) > 0 {
			<-sigs
		}
		done := make(chan struct{})
		go func() {
			select {
			case <-sigs:
				s.Interrupt()
			case <-done:
			}
		}()
		defer close(done)
		return run()
	}

	status := ExitOK
	for {
		l, err := ln.Prompt(ShellPrompt)
		if errors.Is(err, liner.ErrPromptAborted) {
			continue
		}
		if err != nil {
			if err == io.EOF {
				fmt.Fprintln(out)
			} else {
				fmt.Fprintf(out, "%s\n", Message(err))
			}
			return status
		}
		if strings.TrimSpace(l) == "" {
			continue
		}
		ln.AppendHistory(l)
		saveHistory()
		cmds, err := ParseLine(l)
		if err != nil {
			fmt.Fprintf(out, "%s\n", Message(err))
			status = ExitUsage
			continue
		}
		for i, c := range cmds {
			var payload []string
			if i == len(cmds)-1 && hasPayload(c) {
				payload = []string{}
				aborted := false
				for {
					pl, err := ln.Prompt(PayloadPrompt)
					if err != nil {
						aborted = errors.Is(err, liner.ErrPromptAborted)
						break
					}
					if pl == "" {
						break
					}
					payload = append(payload, pl)
				}
				if aborted {
					fmt.Fprintf(out, "gohactl: payload abandoned\n")
					break
				}
			}
			if isQuit(c) {
				return status
			}
			switch c.Words[0] {
			case "watch":
				status = s.Watch(c.Words[1:], c.Stages, int(os.Stdin.Fd()), outFd, out, out)
				continue
			}
			status = guard(func() int { return s.Run(c, payload, out, out) })
			if c.Words[0] == "help" && len(c.Words) == 1 && status == ExitOK {
				io.WriteString(out, "\n"+localHelp+StageHelp)
			}
		}
	}
}
