package cli

import "testing"

func TestParseReply(t *testing.T) {
	tests := []struct {
		raw      string // as read in prompt mode, prompt included
		plus     int
		text     string
		severity int
		isErr    bool
	}{
		{"\n> ", 0, "", NoSeverity, false},
		{"[3]: No such server.\n\n> ", 0, "No such server.\n", 3, true},
		{"[6]: 2.6.12-1+deb12u4\n\n> ", 0, "2.6.12-1+deb12u4\n", 6, false},
		{"[4]: IP changed from '127.0.0.1' to '127.0.0.2' by 'stats socket command'\n\n> ", 0, "IP changed from '127.0.0.1' to '127.0.0.2' by 'stats socket command'\n", 4, false},
		{"[0]: emergency\n\n> ", 0, "emergency\n", 0, true},
		// 2.6 leaves out the empty line after some messages.
		{"[3]: Only servers in maintenance mode can be deleted.\n> ", 0, "Only servers in maintenance mode can be deleted.\n", 3, true},
		{"# name\nbe\n\n> ", 0, "# name\nbe\n", NoSeverity, false},
		{"1 (initial 1)\n\n> ", 0, "1 (initial 1)\n", NoSeverity, false},
		{"[6]: Unknown command, but maybe one of the following ones is a better match:\n  quit : disconnect\n\n> ", 0,
			"Unknown command, but maybe one of the following ones is a better match:\n  quit : disconnect\n", 6, true},
		{"+ + + [3]: Unknown map identifier.\n\n> ", 3, "Unknown map identifier.\n", 3, true},
		// Only the prompts the payload caused are removed.
		{"+ + x\n\n> ", 1, "+ x\n", NoSeverity, false},
		{"[9]: not a level\n\n> ", 0, "[9]: not a level\n", NoSeverity, false},
		{"[err]: Empty weight string empty or preceded by garbage\n> ", 0, "Empty weight string empty or preceded by garbage\n", 3, true},
		{"[warning]: IP changed\n\n> ", 0, "IP changed\n", 4, false},
		{"[errors]: x\n\n> ", 0, "[errors]: x\n", NoSeverity, false},
		{"[3]:x\n\n> ", 0, "[3]:x\n", NoSeverity, false},
	}
	for _, tt := range tests {
		r := ParseReply(splitBody(tt.raw, prompt, tt.plus))
		if r.Text != tt.text || r.Severity != tt.severity || r.IsError() != tt.isErr {
			t.Errorf("%q: got %q sev %d err %v; want %q sev %d err %v", tt.raw, r.Text, r.Severity, r.IsError(), tt.text, tt.severity, tt.isErr)
		}
	}
}

func FuzzParseReply(f *testing.F) {
	for _, s := range []string{"\n> ", "[3]: x\n\n> ", "+ + [", "[7]: "} {
		f.Add(s, 2)
	}
	f.Fuzz(func(t *testing.T, raw string, plus int) {
		r := ParseReply(splitBody(raw, prompt, plus%8))
		if r.Text != "" && r.Text[len(r.Text)-1] != '\n' {
			t.Fatalf("text %q does not end with a newline", r.Text)
		}
		if r.Severity < NoSeverity || r.Severity > 7 {
			t.Fatalf("severity %d", r.Severity)
		}
	})
}
