package conformance

import (
	"bufio"
	"fmt"
	"sort"
	"strings"
)

// Intended is one row of docs/compat.md's "Intended differences" table:
// a difference the harness accepts, with its reason.
type Intended struct {
	Case, Step, Path string // globs
	Why              string
	Line             int
}

func (e Intended) matches(d Difference) bool {
	return glob(e.Case, d.Case) && glob(e.Step, d.Step) && glob(e.Path, d.Path)
}

// intendedHeading opens the table in docs/compat.md.
const intendedHeading = "## Intended differences"

// ParseIntended reads the intended-differences table of docs/compat.md:
// the first table after the heading, columns case, step, path, why.
func ParseIntended(doc string) ([]Intended, error) {
	var out []Intended
	in, table := false, false
	sc := bufio.NewScanner(strings.NewReader(doc))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "## ") {
			if in && table {
				break
			}
			in = l == intendedHeading
			continue
		}
		if !in || !strings.HasPrefix(l, "|") {
			if in && table && l != "" {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), "|")
		for i := range cells {
			cells[i] = strings.Trim(strings.TrimSpace(cells[i]), "`")
		}
		if !table {
			// The header row, then the separator row.
			if len(cells) != 4 || cells[0] != "case" {
				return nil, fmt.Errorf("compat.md:%d: the table's columns must be case | step | path | why", line)
			}
			table = true
			continue
		}
		if strings.HasPrefix(cells[0], "---") {
			continue
		}
		if len(cells) != 4 || cells[3] == "" {
			return nil, fmt.Errorf("compat.md:%d: a row needs case, step, path and a reason", line)
		}
		out = append(out, Intended{Case: cells[0], Step: cells[1], Path: cells[2], Why: cells[3], Line: line})
	}
	if !table {
		return nil, fmt.Errorf("compat.md has no table under %q", intendedHeading)
	}
	return out, nil
}

// Tally is one case's line of the conformance table.
type Tally struct {
	Case      string
	Calls     int // steps compared (calls and frames)
	Identical int // steps whose answers are identical after normalisation
	Intended  int // steps that differ only where docs/compat.md says
	Open      int // steps with a difference not fixed yet (the backlog)
}

const (
	tableBegin = "<!-- conformance-table:begin -->"
	tableEnd   = "<!-- conformance-table:end -->"
)

// RenderTable writes the conformance table for tallies.
func RenderTable(tallies []Tally) string {
	sort.Slice(tallies, func(i, j int) bool { return tallies[i].Case < tallies[j].Case })
	var b strings.Builder
	b.WriteString("| case | calls | identical | intended differences | not fixed yet | identical % |\n|---|---:|---:|---:|---:|---:|\n")
	var t Tally
	for _, x := range tallies {
		fmt.Fprintf(&b, "| `%s` | %d | %d | %d | %d | %s |\n", x.Case, x.Calls, x.Identical, x.Intended, x.Open, pct(x.Identical, x.Calls))
		t.Calls += x.Calls
		t.Identical += x.Identical
		t.Intended += x.Intended
		t.Open += x.Open
	}
	fmt.Fprintf(&b, "| **all** | %d | %d | %d | %d | %s |\n", t.Calls, t.Identical, t.Intended, t.Open, pct(t.Identical, t.Calls))
	return b.String()
}

func pct(a, b int) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f %%", 100*float64(a)/float64(b))
}

// ReplaceTable returns doc with the text between the table markers
// replaced by table, and whether the markers were found.
func ReplaceTable(doc, table string) (string, bool) {
	i := strings.Index(doc, tableBegin)
	j := strings.Index(doc, tableEnd)
	if i < 0 || j < i {
		return doc, false
	}
	return doc[:i+len(tableBegin)] + "\n" + table + doc[j:], true
}
