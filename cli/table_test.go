package cli

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func readTestdata(t testing.TB, name string) string {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The fixtures are replies of HAProxy 2.6.12 captured with socat.
func TestParseTableShowStat(t *testing.T) {
	tb, err := ParseTable(readTestdata(t, "show_stat.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Cols) != 128 || tb.Cols[0] != "pxname" || tb.Cols[17] != "status" || tb.Cols[127] != "h1_spliced_bytes_out" {
		t.Fatalf("columns: %d %q", len(tb.Cols), tb.Cols)
	}
	if len(tb.Rows) != 5 {
		t.Fatalf("rows: %d", len(tb.Rows))
	}
	want := [][2]string{{"fe", "FRONTEND"}, {"be", "s1"}, {"be", "s2"}, {"be", "BACKEND"}, {"be2", "BACKEND"}}
	for i, row := range tb.Rows {
		if len(row) != len(tb.Cols) || row[0] != want[i][0] || row[1] != want[i][1] {
			t.Errorf("row %d: %d cells, %q", i, len(row), row[:2])
		}
	}
}

func TestParseTableBlankSeparated(t *testing.T) {
	tb, err := ParseTable(readTestdata(t, "show_servers_state.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Cols) != 25 || tb.Cols[3] != "srv_name" || len(tb.Rows) != 2 || tb.Rows[1][3] != "s2" || tb.Rows[1][18] != "23413" {
		t.Fatalf("got %q / %q", tb.Cols, tb.Rows)
	}
	// show servers conn has one header word for its per-thread columns.
	tb, err = ParseTable(readTestdata(t, "show_servers_conn.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tb.Cols); n != 15 || tb.Cols[n-1] != "15" || tb.Rows[0][0] != "be/s1" {
		t.Fatalf("got %q / %q", tb.Cols, tb.Rows)
	}
	tb, err = ParseTable("# name\nbe1\nbe2\n")
	if err != nil || len(tb.Rows) != 2 || tb.Rows[1][0] != "be2" {
		t.Fatalf("show backend: %v %q", err, tb)
	}
}

func TestParseTableQuotedCSV(t *testing.T) {
	tb, err := ParseTable("# a,b,c,\nx,\"y, with comma\",\"say \"\"hi\"\"\",\nshort,\n")
	if err != nil {
		t.Fatal(err)
	}
	if tb.Rows[0][1] != "y, with comma" || tb.Rows[0][2] != `say "hi"` {
		t.Errorf("quoted cells: %q", tb.Rows[0])
	}
	if len(tb.Rows[1]) != 3 || tb.Rows[1][0] != "short" || tb.Rows[1][2] != "" {
		t.Errorf("short row not padded: %q", tb.Rows[1])
	}
}

func TestParseTableNotTable(t *testing.T) {
	for _, s := range []string{"", "2.6.12\n", "1 (initial 1)\n", "Name: HAProxy\nVersion: 2.6\n"} {
		if _, err := ParseTable(s); !errors.Is(err, ErrNotTable) {
			t.Errorf("ParseTable(%q) = %v, want ErrNotTable", s, err)
		}
	}
}

func TestRender(t *testing.T) {
	tb := &Table{Cols: []string{"pxname", "svname", "weight"}, Rows: [][]string{
		{"be", "s1", "1"}, {"be", "long-server", "100"}, {"be", "s3", ""},
	}}
	want := "pxname  svname       weight\n" +
		"be      s1                1\n" +
		"be      long-server     100\n" +
		"be      s3\n"
	if got := tb.Render(); got != want {
		t.Errorf("Render:\n%s\nwant:\n%s", got, want)
	}
}

func TestApplyStages(t *testing.T) {
	stat := readTestdata(t, "show_stat.txt")
	tests := []struct {
		stages string
		want   string
	}{
		{"cols pxname,svname,status,weight", "pxname  svname    status    weight\n" +
			"fe      FRONTEND  OPEN\n" +
			"be      s1        no check       1\n" +
			"be      s2        no check       5\n" +
			"be      BACKEND   UP             6\n" +
			"be2     BACKEND   UP             0\n"},
		{"where svname!=FRONTEND,BACKEND | cols svname addr", "svname  addr\n" +
			"s1      127.0.0.1:23412\n" +
			"s2      127.0.0.1:23413\n"},
		{"where status=UP | cols pxname", "pxname\nbe\nbe2\n"},
		{"where weight>=5 type=1 | cols pxname,weight", "pxname  weight\nbe           6\n"},
		{"where svname~^s[0-9]$ weight<2 | cols svname", "svname\ns1\n"},
		{"where svname=s* | sort -r weight | cols svname,weight", "svname  weight\ns2           5\ns1           1\n"},
		{"where pxname!~be | cols pxname", "pxname\nfe\n"},
		{"grep -v BACKEND | where pxname=be | cols svname", "svname\ns1\ns2\n"},
		{"where status=nothing | cols pxname", "pxname\n"},
		{"where status=nothing", ""},
	}
	for _, tt := range tests {
		cmds, err := ParseLine("show stat | " + tt.stages)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ApplyStages(stat, cmds[0].Stages)
		if err != nil {
			t.Errorf("%s: %v", tt.stages, err)
			continue
		}
		if got != tt.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tt.stages, got, tt.want)
		}
	}
}

// Without cols, a table shows only columns that have a value somewhere.
func TestApplyStagesDropsEmptyColumns(t *testing.T) {
	got, err := ApplyStages(readTestdata(t, "show_stat.txt"), [][]string{{"where", "svname=s1"}})
	if err != nil {
		t.Fatal(err)
	}
	header := strings.Fields(strings.SplitN(got, "\n", 2)[0])
	for _, c := range header {
		if c == "check_status" || c == "algo" {
			t.Errorf("column %s is empty for s1 but shown", c)
		}
	}
	if header[0] != "pxname" || !strings.Contains(got, "127.0.0.1:23412") {
		t.Errorf("got %q", got)
	}
}

func TestApplyStagesErrors(t *testing.T) {
	stat := readTestdata(t, "show_stat.txt")
	tests := []struct {
		text, stages, want string
	}{
		{stat, "cols nosuch", `no column "nosuch"`},
		{stat, "where nosuch=1", `no column "nosuch"`},
		{stat, "where status", "bad condition"},
		{stat, "where weight>abc", "compares with a number"},
		{stat, "where svname~(", "bad regular expression"},
		{stat, "frobnicate", "unknown pipe stage"},
		{stat, "cols", "needs column names"},
		{stat, "sort", "usage: sort"},
		{"2.6.12\n", "table", "not a table"},
	}
	for _, tt := range tests {
		cmds, err := ParseLine("x | " + tt.stages)
		if err != nil {
			t.Fatal(err)
		}
		_, err = ApplyStages(tt.text, cmds[0].Stages)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.stages, err, tt.want)
		}
	}
}

func TestGrepText(t *testing.T) {
	got, err := ApplyStages("Name: HAProxy\nVersion: 2.6\nPid: 1\n", [][]string{{"grep", "^(Name|Pid):"}})
	if err != nil || got != "Name: HAProxy\nPid: 1\n" {
		t.Errorf("got %q, %v", got, err)
	}
}

func FuzzParseTable(f *testing.F) {
	f.Add(readTestdata(f, "show_stat.txt"))
	f.Add(readTestdata(f, "show_servers_state.txt"))
	f.Add("# a,b,\n\"x\n")
	f.Add("# a b\n1 2 3 4\n\n")
	f.Fuzz(func(t *testing.T, s string) {
		tb, err := ParseTable(s)
		if err != nil {
			return
		}
		for _, row := range tb.Rows {
			if len(row) != len(tb.Cols) {
				t.Fatalf("row has %d cells for %d columns", len(row), len(tb.Cols))
			}
		}
		tb.DropEmpty().Render()
	})
}
