package runtime

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"goha/core"
)

// Errors of server-state files.
var (
	ErrStateVersion = errors.New("runtime: server-state file: unsupported version")
	ErrStateLine    = errors.New("runtime: server-state file: bad line")
)

// LoadServerStateFiles applies the server-state files at start, as
// `load-server-state-from-file` asks: `global` reads the global
// `server-state-file`, `local` reads a file named after each backend;
// both are relative to `server-state-base` unless absolute. A missing file
// is not an error (there is nothing to restore on a first start). Problems
// are returned, one per line or file; good lines are applied anyway.
func LoadServerStateFiles(conf *core.Config) []error {
	g := &conf.Global
	resolve := func(name string) string {
		if name == "" || filepath.IsAbs(name) || g.ServerStateBase == "" {
			return name
		}
		return filepath.Join(g.ServerStateBase, name)
	}
	var errs []error
	apply := func(path string, only *core.Proxy) {
		f, err := os.Open(path)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, fmt.Errorf("runtime: server-state file: %w", err))
			}
			return
		}
		defer f.Close()
		errs = append(errs, ApplyServerState(conf, f, only)...)
	}
	switch g.LoadStateFrom {
	case "global":
		if g.ServerStateFile != "" {
			apply(resolve(g.ServerStateFile), nil)
		}
	case "local":
		for _, p := range conf.Proxies {
			if p.IsBackend() {
				apply(resolve(p.Name), p)
			}
		}
	}
	return errs
}

// ApplyServerState reads a state file in `show servers state` format and
// restores each server it names (only those of backend only, when not
// nil). Servers are matched by backend and server name; lines for
// servers that no longer exist are skipped.
func ApplyServerState(conf *core.Config, r io.Reader, only *core.Proxy) []error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	if !sc.Scan() {
		return nil
	}
	if v := strings.TrimSpace(sc.Text()); v != "1" {
		return []error{fmt.Errorf("%w '%s'", ErrStateVersion, v)}
	}
	var errs []error
	n := 1
	for sc.Scan() {
		n++
		ln := sc.Text()
		if ln == "" || ln[0] == '#' {
			continue
		}
		st, be, sv, err := ParseStateLine(ln)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w %d: %v", ErrStateLine, n, err))
			continue
		}
		p := conf.FindProxy(be, core.CapBE)
		if p == nil || (only != nil && p != only) {
			continue
		}
		if s := p.FindServer(sv); s != nil {
			s.ApplySavedState(st)
		}
	}
	return errs
}

// ParseStateLine reads one server line of the state file.
func ParseStateLine(ln string) (st core.SavedState, be, sv string, err error) {
	f := strings.Fields(ln)
	if len(f) < 19 {
		return st, "", "", fmt.Errorf("%d fields, want at least 19", len(f))
	}
	num := func(i int) (int64, bool) {
		v, err := strconv.ParseInt(f[i], 10, 64)
		return v, err == nil
	}
	vals := make([]int64, 0, 11)
	for _, i := range []int{5, 6, 7, 8, 9, 10, 11, 12, 13, 14} {
		v, ok := num(i)
		if !ok {
			return st, "", "", fmt.Errorf("field %d '%s' is not a number", i+1, f[i])
		}
		vals = append(vals, v)
	}
	if vals[0] < 0 || vals[0] > 3 || vals[2] < 0 || vals[2] > 256 || vals[3] < 0 || vals[3] > 256 {
		return st, "", "", fmt.Errorf("value out of range")
	}
	st = core.SavedState{
		OpState: int(vals[0]), AdminState: int(vals[1]), UWeight: int(vals[2]), IWeight: int(vals[3]),
		SinceChange: vals[4], CheckStatus: int(vals[5]), CheckRes: int(vals[6]), CheckHealth: int(vals[7]),
		CheckState: int(vals[8]), AgentState: int(vals[9]), Addr: f[4], Port: -1,
	}
	if p, ok := num(18); ok && p >= 0 && p <= 65535 {
		st.Port = int(p)
	}
	return st, f[1], f[3], nil
}
