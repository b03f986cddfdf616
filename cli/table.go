package cli

import (
	"encoding/csv"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Table is a tabular reply: show stat (CSV), show servers state, show
// servers conn, show backend (blank-separated), and others of the same shape:
// optional lines, then a header line starting with "# ", then rows.
type Table struct {
	Cols []string
	Rows [][]string // each row has len(Cols) cells
}

// ParseTable reads a tabular reply. Lines before the header (the format
// version of show servers state) are skipped. A header with commas means CSV
// rows; otherwise cells are separated by blanks. Rows longer than the header
// get columns named by their position.
func ParseTable(text string) (*Table, error) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	h := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "# ") {
			h = i
			break
		}
	}
	if h < 0 {
		return nil, ErrNotTable
	}
	header := lines[h][2:]
	body := lines[h+1:]
	t := &Table{}
	if strings.Contains(header, ",") {
		t.Cols = strings.Split(header, ",")
		r := csv.NewReader(strings.NewReader(strings.Join(body, "\n")))
		r.FieldsPerRecord = -1
		r.LazyQuotes = true
		r.ReuseRecord = false
		recs, err := r.ReadAll()
		if err != nil {
			return nil, fmt.Errorf("cli: bad CSV row: %w", err)
		}
		t.Rows = recs
	} else {
		t.Cols = strings.Fields(header)
		for _, l := range body {
			if strings.TrimSpace(l) == "" {
				continue
			}
			t.Rows = append(t.Rows, strings.Fields(l))
		}
	}
	// HAProxy ends the CSV header and every row with a comma.
	if n := len(t.Cols); n > 0 && t.Cols[n-1] == "" {
		t.Cols = t.Cols[:n-1]
	}
	width := len(t.Cols)
	for _, row := range t.Rows {
		for len(row) > width && row[len(row)-1] == "" {
			row = row[:len(row)-1]
		}
		if len(row) > width {
			width = len(row)
		}
	}
	for i := len(t.Cols); i < width; i++ {
		t.Cols = append(t.Cols, strconv.Itoa(i+1))
	}
	for i, row := range t.Rows {
		if len(row) > width {
			row = row[:width]
		}
		for len(row) < width {
			row = append(row, "")
		}
		t.Rows[i] = row
	}
	return t, nil
}

// col returns the index of a column by name, or an error naming the
// columns that exist.
func (t *Table) col(name string) (int, error) {
	for i, c := range t.Cols {
		if c == name {
			return i, nil
		}
	}
	const show = 12
	list := t.Cols
	more := ""
	if len(list) > show {
		list, more = list[:show], fmt.Sprintf(", ... (%d columns)", len(t.Cols))
	}
	return 0, fmt.Errorf("cli: no column %q; columns are %s%s", name, strings.Join(list, ","), more)
}

// Select keeps the named columns, in the given order.
func (t *Table) Select(names []string) (*Table, error) {
	idx := make([]int, len(names))
	for i, n := range names {
		j, err := t.col(n)
		if err != nil {
			return nil, err
		}
		idx[i] = j
	}
	out := &Table{Cols: append([]string(nil), names...)}
	for _, row := range t.Rows {
		nr := make([]string, len(idx))
		for i, j := range idx {
			nr[i] = row[j]
		}
		out.Rows = append(out.Rows, nr)
	}
	return out, nil
}

// DropEmpty removes the columns that are empty in every row, which is most
// of show stat's 100-odd columns on any one kind of row.
func (t *Table) DropEmpty() *Table {
	if len(t.Rows) == 0 {
		return t
	}
	var keep []string
	for j, c := range t.Cols {
		for _, row := range t.Rows {
			if row[j] != "" {
				keep = append(keep, c)
				break
			}
		}
	}
	out, _ := t.Select(keep)
	return out
}

// Cond is one row condition of a "where" stage.
type Cond struct {
	Col   string
	Op    string // = != ~ !~ < <= > >=
	Value string
	re    *regexp.Regexp
	alts  []*regexp.Regexp // for = and !=: comma-separated globs
	num   float64
}

var condOps = []string{"!=", "!~", "<=", ">=", "=", "~", "<", ">"}

// ParseCond reads "col=value" and its relatives:
//
//	col=v1,v2   the cell matches one of the glob patterns ('*', '?')
//	col!=v1,v2  the cell matches none of them
//	col~re      the cell matches the regular expression (unanchored)
//	col!~re     it does not
//	col<n col<=n col>n col>=n   numeric comparison; an empty or
//	            non-numeric cell never matches
func ParseCond(s string) (Cond, error) {
	i := strings.IndexAny(s, "=!~<>")
	if i <= 0 {
		return Cond{}, fmt.Errorf("cli: bad condition %q: want <column><op><value> with op one of = != ~ !~ < <= > >=", s)
	}
	c := Cond{Col: s[:i]}
	for _, op := range condOps {
		if strings.HasPrefix(s[i:], op) {
			c.Op = op
			break
		}
	}
	if c.Op == "" {
		return Cond{}, fmt.Errorf("cli: bad operator in condition %q", s)
	}
	c.Value = s[i+len(c.Op):]
	switch c.Op {
	case "=", "!=":
		for _, alt := range strings.Split(c.Value, ",") {
			c.alts = append(c.alts, globRegexp(alt))
		}
	case "~", "!~":
		re, err := regexp.Compile(c.Value)
		if err != nil {
			return Cond{}, fmt.Errorf("cli: bad regular expression in %q: %v", s, err)
		}
		c.re = re
	default:
		v, err := strconv.ParseFloat(c.Value, 64)
		if err != nil {
			return Cond{}, fmt.Errorf("cli: %q compares with a number, not %q", s, c.Value)
		}
		c.num = v
	}
	return c, nil
}

func globRegexp(g string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for _, r := range g {
		switch r {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

func (c Cond) match(cell string) bool {
	switch c.Op {
	case "=", "!=":
		hit := false
		for _, re := range c.alts {
			if re.MatchString(cell) {
				hit = true
				break
			}
		}
		return hit == (c.Op == "=")
	case "~":
		return c.re.MatchString(cell)
	case "!~":
		return !c.re.MatchString(cell)
	}
	v, err := strconv.ParseFloat(cell, 64)
	if err != nil {
		return false
	}
	switch c.Op {
	case "<":
		return v < c.num
	case "<=":
		return v <= c.num
	case ">":
		return v > c.num
	default:
		return v >= c.num
	}
}

// Where keeps the rows that satisfy every condition.
func (t *Table) Where(conds []Cond) (*Table, error) {
	idx := make([]int, len(conds))
	for i, c := range conds {
		j, err := t.col(c.Col)
		if err != nil {
			return nil, err
		}
		idx[i] = j
	}
	out := &Table{Cols: t.Cols}
rows:
	for _, row := range t.Rows {
		for i, c := range conds {
			if !c.match(row[idx[i]]) {
				continue rows
			}
		}
		out.Rows = append(out.Rows, row)
	}
	return out, nil
}

// SortBy orders the rows by a column, numerically when both cells are
// numbers; the sort is stable so equal rows keep the server's order.
func (t *Table) SortBy(name string, desc bool) (*Table, error) {
	j, err := t.col(name)
	if err != nil {
		return nil, err
	}
	rows := append([][]string(nil), t.Rows...)
	sort.SliceStable(rows, func(a, b int) bool {
		x, y := rows[a][j], rows[b][j]
		if desc {
			x, y = y, x
		}
		fx, ex := strconv.ParseFloat(x, 64)
		fy, ey := strconv.ParseFloat(y, 64)
		if ex == nil && ey == nil {
			return fx < fy
		}
		return x < y
	})
	return &Table{Cols: t.Cols, Rows: rows}, nil
}

// Render aligns the table in columns two spaces apart. Numeric columns are
// right-aligned so that digits line up.
func (t *Table) Render() string {
	width := make([]int, len(t.Cols))
	numeric := make([]bool, len(t.Cols))
	for j, c := range t.Cols {
		width[j] = len(c)
		numeric[j] = len(t.Rows) > 0
		for _, row := range t.Rows {
			if len(row[j]) > width[j] {
				width[j] = len(row[j])
			}
			if row[j] != "" {
				if _, err := strconv.ParseFloat(row[j], 64); err != nil {
					numeric[j] = false
				}
			}
		}
	}
	var b strings.Builder
	line := func(cells []string) {
		var l strings.Builder
		for j, c := range cells {
			if j > 0 {
				l.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[j]-len(c))
			if numeric[j] {
				l.WriteString(pad + c)
			} else {
				l.WriteString(c + pad)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteByte('\n')
	}
	line(t.Cols)
	for _, row := range t.Rows {
		line(row)
	}
	return b.String()
}
