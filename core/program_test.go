package core

import (
	"strings"
	"testing"
)

// The program section's lines and messages, as HAProxy 2.6 reads them.
func TestProgramSection(t *testing.T) {
	cases := []struct {
		src  string
		want []string // diagnostics, in order
		cmd  string   // the first program's command, joined
		keep bool     // the first program's start-on-reload
	}{
		{src: "global\n master-worker\nprogram p\n command sleep 10\n", cmd: "sleep 10", keep: true},
		{src: "global\n master-worker\nprogram p\n command a\n no option start-on-reload\n", cmd: "a", keep: false},
		{src: "global\n master-worker\nprogram p\n command a\n no option start-on-reload\n default option start-on-reload\n", cmd: "a", keep: false},
		{src: "program p\n command a\n", cmd: "a", keep: true,
			want: []string{"[ALERT] config : Can't use a 'program' section without master worker mode."}},
		{src: "global\n master-worker\nprogram p\n", cmd: "", keep: true,
			want: []string{"[ALERT] config : The program section 'p' lacks a command to launch."}},
		{src: "global\n master-worker\nprogram p\n command a\n bogus\n",
			want: []string{"[ALERT] config : parsing [t.cfg:5] : unknown keyword 'bogus' in 'program' section"}},
		{src: "global\n master-worker\nprogram p\n command a\n option frob\n",
			want: []string{"[ALERT] config : parsing [t.cfg:5] : unknown option 'frob'."}},
		{src: "global\n master-worker\nprogram p\n command a\n user root\n user root\n", cmd: "a", keep: true,
			want: []string{"[ALERT] config : parsing [t.cfg:6] : user/uid already specified. Continuing."}},
		{src: "global\n master-worker\nprogram p\n command\n",
			want: []string{"[ALERT] config : parsing [t.cfg:4]: 'command' expects a command with optional arguments separated in words."}},
	}
	for _, c := range cases {
		cfg, diags := buildText(t, c.src)
		if strings.Join(diags, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%q: diagnostics\n%s\nwant\n%s", c.src, strings.Join(diags, "\n"), strings.Join(c.want, "\n"))
		}
		if c.cmd == "" && c.keep == false {
			if len(cfg.Programs) != 0 {
				t.Errorf("%q: a section kept after an error", c.src)
			}
			continue
		}
		if len(cfg.Programs) != 1 {
			t.Errorf("%q: %d programs", c.src, len(cfg.Programs))
			continue
		}
		p := cfg.Programs[0]
		if strings.Join(p.Command, " ") != c.cmd || p.StartOnReload != c.keep {
			t.Errorf("%q: command %q start-on-reload %v", c.src, p.Command, p.StartOnReload)
		}
	}
}

// FuzzProgramSection reads arbitrary program sections: nothing panics.
func FuzzProgramSection(f *testing.F) {
	f.Add("program p\n command sleep 10\n user nobody\n group nogroup\n no option start-on-reload\n")
	f.Add("program\nprogram p x\nprogram p\nprogram p\n no command\n option\n user\n group a b\n")
	f.Fuzz(func(t *testing.T, src string) {
		buildText(t, "global\n master-worker\n"+src)
	})
}
