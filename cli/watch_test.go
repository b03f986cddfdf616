package cli

import (
	"testing"
	"time"
)

func TestHighlight(t *testing.T) {
	prev := "pxname  svname  scur\nbe      s1         3\nbe      s2        10\n"
	cur := "pxname  svname  scur\nbe      s1         4\nbe      s2        10\nbe      s3         0\n"
	want := "pxname  svname  scur\n" +
		"be      s1         " + reverseOn + "4" + reverseOff + "\n" +
		"be      s2        10\n" +
		reverseOn + "be" + reverseOff + "      " + reverseOn + "s3" + reverseOff + "         " + reverseOn + "0" + reverseOff + "\n"
	if got := Highlight(cur, prev); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// A word that grew into its neighbour's place is new, not unchanged.
	if got := Highlight("ab c", "a bc"); got != reverseOn+"ab"+reverseOff+" "+reverseOn+"c"+reverseOff {
		t.Errorf("shifted words: %q", got)
	}
	if got := Highlight("same\n", "same\n"); got != "same\n" {
		t.Errorf("unchanged: %q", got)
	}
}

func TestClip(t *testing.T) {
	if got := clip("abcdef\nxy\nz\n", 3, 2); got != "abc\nxy\n" {
		t.Errorf("got %q", got)
	}
	if got := clip("abcdef\n", 0, 0); got != "abcdef\n" {
		t.Errorf("no limit: %q", got)
	}
}

func TestParseInterval(t *testing.T) {
	for in, want := range map[string]time.Duration{"2": 2 * time.Second, "0.5": 500 * time.Millisecond, "250ms": 250 * time.Millisecond, "1m": time.Minute} {
		if got, err := ParseInterval(in); err != nil || got != want {
			t.Errorf("ParseInterval(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "x", "0", "-1", "0.01", "10us"} {
		if _, err := ParseInterval(bad); err == nil {
			t.Errorf("ParseInterval(%q) accepted", bad)
		}
	}
}
