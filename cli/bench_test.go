package cli

import (
	"strings"
	"testing"
)

// bigStat is a show stat reply with n server rows, made from the fixture's.
func bigStat(b *testing.B, n int) string {
	lines := strings.Split(strings.TrimRight(readTestdata(b, "show_stat.txt"), "\n"), "\n")
	var sb strings.Builder
	sb.WriteString(lines[0] + "\n")
	for i := 0; i < n; i++ {
		sb.WriteString(lines[2] + "\n")
	}
	return sb.String()
}

// A 1000-server show stat, filtered and rendered, as watch does each tick.
func BenchmarkStatTable1000(b *testing.B) {
	text := bigStat(b, 1000)
	cmds, err := ParseLine("show stat | where status=no* weight>=1 | cols pxname,svname,status,weight,scur")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ApplyStages(text, cmds[0].Stages); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHighlight1000(b *testing.B) {
	cmds, _ := ParseLine("x | cols pxname,svname,status,weight,scur")
	prev, _ := ApplyStages(bigStat(b, 1000), cmds[0].Stages)
	cur := strings.Replace(prev, "no check", "UP      ", 10)
	b.ReportAllocs()
	for b.Loop() {
		Highlight(cur, prev)
	}
}
