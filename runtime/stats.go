package runtime

import (
	"time"

	"goha/core/stream"
)

func init() {
	Register(&Command{Words: []string{"show", "stat"}, Usage: "show stat [desc|json|no-maint|typed|up]*",
		Help: "report counters for each proxy and server", Run: cmdShowStat})
}

func cmdShowStat(c *Ctx) {
	f, errText := stream.ParseStatArgs(c.Proc.Conf, c.Args[2:])
	if errText != "" {
		c.Err(errText)
		return
	}
	stream.DumpStats(c.Proc, c, f, c.Level() >= LevelOperator, time.Now())
}
