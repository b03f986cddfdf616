//go:build regtest

package config

import (
	"errors"
	"os/exec"
	"regexp"
	"testing"

	"goha/regtests/internal/bin"
)

// runCC runs prog -cc expr with env and returns its exit status and its
// ALERT line with the pid taken out.
func runCC(t *testing.T, prog, expr string, env []string) (int, string) {
	cmd := exec.Command(prog, "-cc", expr)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, env...)
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", prog, err)
	}
	alert := regexp.MustCompile(`(?m)^\[ALERT\] +\(\d+\) : (.*)$`).FindStringSubmatch(string(out))
	if alert == nil {
		return code, ""
	}
	return code, alert[1]
}

// TestCheckConditionWords: -cc cuts its argument into words as a
// configuration line is cut (environment variables in double quotes
// expanded, an unset one empty, escapes resolved, '#' not a comment) before
// the words are evaluated, and reports each kind of error as HAProxy does.
func TestCheckConditionWords(t *testing.T) {
	goha := bin.Path(t, "goha")
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		t.Skip("haproxy not installed")
	}
	env := []string{"TESTVAR=1", "SPACED=a  b"}
	cases := []struct {
		expr string
		want int
	}{
		{`defined(TESTVAR) && streq("$TESTVAR","1")`, 0},
		{`streq("${TESTVAR}","1")`, 0},
		{`streq("$TESTVAR",$TESTVAR)`, 1},
		{`streq("$NOPE","")`, 0},
		{`streq("${NOPE-d}x","dx")`, 0},
		{`streq('$TESTVAR','$TESTVAR')`, 0},
		{`streq("a b","a  b")`, 1},
		{`streq("$SPACED","a  b")`, 0},
		{`streq("${SPACED[*]}","a b")`, 0},
		{`streq("\x41",A)`, 0},
		{`streq("a\"b",a)`, 2},
		{`streq("\x4",A)`, 2},
		{`streq("$1",x)`, 2},
		{`streq("${TESTVAR",1)`, 2},
		{`streq(a,a) # c`, 2},
		{`"`, 2},
		{`  1  `, 0},
		{``, 1},
	}
	for _, c := range cases {
		gcode, galert := runCC(t, goha, c.expr, env)
		hcode, halert := runCC(t, haproxy, c.expr, env)
		if hcode != c.want {
			t.Errorf("%s: haproxy exit %d, the test expects %d (%s)", c.expr, hcode, c.want, halert)
		}
		if gcode != hcode || galert != halert {
			t.Errorf("%s:\n goha    %d %q\n haproxy %d %q", c.expr, gcode, galert, hcode, halert)
		}
	}
}
