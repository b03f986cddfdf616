package cli

import (
	"fmt"
	"regexp"
	"strings"
)

// StageHelp describes the local pipe stages, for the shell's help.
const StageHelp = `Pipe stages (after a command, as in "show stat | where status=UP | cols pxname,svname,scur"):
  | table                     render a tabular reply as an aligned table
  | cols <col>[,<col>...]     keep these columns, in this order
  | where <cond> [<cond>...]  keep rows matching every condition:
                              col=v[,v...] (globs * ?), col!=v, col~re, col!~re,
                              col<n, col<=n, col>n, col>=n
  | sort [-r] <col>           order rows by a column (numerically when numbers)
  | grep [-v] <re>            keep lines (rows of a table) matching a regular expression
`

// ApplyStages runs a reply's text through pipe stages and returns what to
// print. Stages other than grep need a tabular reply. Without a cols stage,
// columns empty in every remaining row are left out.
func ApplyStages(text string, stages [][]string) (string, error) {
	if len(stages) == 0 {
		return text, nil
	}
	var t *Table
	chose := false
	asTable := func() error {
		if t != nil {
			return nil
		}
		var err error
		t, err = ParseTable(text)
		return err
	}
	for _, st := range stages {
		name, args := st[0], st[1:]
		var err error
		switch name {
		case "table":
			if len(args) > 0 {
				return "", fmt.Errorf("cli: table takes no argument")
			}
			err = asTable()
		case "cols":
			if err = asTable(); err != nil {
				break
			}
			var names []string
			for _, a := range args {
				for _, n := range strings.Split(a, ",") {
					if n != "" {
						names = append(names, n)
					}
				}
			}
			if len(names) == 0 {
				return "", fmt.Errorf("cli: cols needs column names")
			}
			t, err = t.Select(names)
			chose = true
		case "where":
			if err = asTable(); err != nil {
				break
			}
			if len(args) == 0 {
				return "", fmt.Errorf("cli: where needs a condition such as status=UP")
			}
			var conds []Cond
			for _, a := range args {
				c, cerr := ParseCond(a)
				if cerr != nil {
					return "", cerr
				}
				conds = append(conds, c)
			}
			t, err = t.Where(conds)
		case "sort":
			if err = asTable(); err != nil {
				break
			}
			desc := len(args) > 0 && args[0] == "-r"
			if desc {
				args = args[1:]
			}
			if len(args) != 1 {
				return "", fmt.Errorf("cli: usage: sort [-r] <column>")
			}
			t, err = t.SortBy(args[0], desc)
		case "grep":
			invert := len(args) > 0 && args[0] == "-v"
			if invert {
				args = args[1:]
			}
			if len(args) != 1 {
				return "", fmt.Errorf("cli: usage: grep [-v] <regexp>")
			}
			re, rerr := regexp.Compile(args[0])
			if rerr != nil {
				return "", fmt.Errorf("cli: bad regular expression %q: %v", args[0], rerr)
			}
			if t != nil {
				out := &Table{Cols: t.Cols}
				for _, row := range t.Rows {
					if re.MatchString(strings.Join(row, " ")) != invert {
						out.Rows = append(out.Rows, row)
					}
				}
				t = out
			} else {
				text = grepLines(text, re, invert)
			}
		default:
			return "", fmt.Errorf("cli: unknown pipe stage %q (stages: table, cols, where, sort, grep)", name)
		}
		if err != nil {
			if err == ErrNotTable {
				return "", fmt.Errorf("%w: %s needs a reply with a \"# \" header line", ErrNotTable, name)
			}
			return "", err
		}
	}
	if t == nil {
		return text, nil
	}
	if !chose {
		if len(t.Rows) == 0 {
			// Without rows nothing says which columns matter; a
			// 100-column header would only be noise.
			return "", nil
		}
		t = t.DropEmpty()
	}
	return t.Render(), nil
}

// grepLines keeps matching lines and any "# " header line.
func grepLines(text string, re *regexp.Regexp, invert bool) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(text, "\n") {
		if l == "" {
			continue
		}
		body := strings.TrimSuffix(l, "\n")
		if strings.HasPrefix(body, "# ") || re.MatchString(body) != invert {
			b.WriteString(l)
		}
	}
	return b.String()
}
