package bench

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Report is what a run writes into its directory: report.md with the
// run's header (machine, versions, configuration, command), one section
// per scenario with its tables and plots (SVG files beside it), and the
// raw rows as CSV.
type Report struct {
	Title    string
	Header   [][2]string // key, value
	Sections []Section
}

// Section is one scenario's part of a report.
type Section struct {
	Title  string
	Text   []string // paragraphs (Markdown)
	Tables []Table
	Plots  []NamedPlot
	CSV    *CSV
	Notes  []string // "where it stopped and why", saturation warnings
}

// Table is a Markdown table.
type Table struct {
	Header []string
	Rows   [][]string
}

// NamedPlot is a plot written to File (an .svg name in the report dir).
type NamedPlot struct {
	File string
	Plot Plot
}

// CSV is a raw data file: a header and rows of strings.
type CSV struct {
	File   string
	Header []string
	Rows   [][]string
}

// Write puts the report into dir (created if needed).
func (r *Report) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create the report directory (set --report): %w", err)
	}
	var md bytes.Buffer
	fmt.Fprintf(&md, "# %s\n\n", r.Title)
	if len(r.Header) > 0 {
		md.WriteString("| | |\n|---|---|\n")
		for _, kv := range r.Header {
			fmt.Fprintf(&md, "| %s | %s |\n", mdCell(kv[0]), mdCell(kv[1]))
		}
		md.WriteString("\n")
	}
	for _, s := range r.Sections {
		fmt.Fprintf(&md, "## %s\n\n", s.Title)
		for _, t := range s.Text {
			md.WriteString(t + "\n\n")
		}
		for _, t := range s.Tables {
			t.writeMD(&md)
			md.WriteString("\n")
		}
		for _, n := range s.Notes {
			fmt.Fprintf(&md, "> %s\n\n", n)
		}
		for _, p := range s.Plots {
			if err := os.WriteFile(filepath.Join(dir, p.File), p.Plot.SVG(), 0o644); err != nil {
				return err
			}
			fmt.Fprintf(&md, "![%s](%s)\n\n", p.Plot.Title, p.File)
		}
		if s.CSV != nil {
			if err := s.CSV.Write(filepath.Join(dir, s.CSV.File)); err != nil {
				return err
			}
			fmt.Fprintf(&md, "Raw rows: [%s](%s)\n\n", s.CSV.File, s.CSV.File)
		}
	}
	return os.WriteFile(filepath.Join(dir, "report.md"), md.Bytes(), 0o644)
}

func mdCell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

func (t Table) writeMD(b *bytes.Buffer) {
	b.WriteString("| " + strings.Join(t.Header, " | ") + " |\n|")
	for range t.Header {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = mdCell(c)
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
}

// Write saves the CSV.
func (c *CSV) Write(path string) error {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(c.Header)
	w.WriteAll(c.Rows)
	if err := w.Error(); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// ReadCSV loads a CSV written by Write.
func ReadCSV(path string) (*CSV, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: empty", path)
	}
	return &CSV{File: filepath.Base(path), Header: recs[0], Rows: recs[1:]}, nil
}

// Col returns the index of a column, -1 if absent.
func (c *CSV) Col(name string) int {
	for i, h := range c.Header {
		if h == name {
			return i
		}
	}
	return -1
}

// Float reads a numeric cell (NaN when absent or not a number).
func (c *CSV) Float(row int, col string) float64 {
	i := c.Col(col)
	if i < 0 || row >= len(c.Rows) || i >= len(c.Rows[row]) {
		return nanF
	}
	v, err := strconv.ParseFloat(c.Rows[row][i], 64)
	if err != nil {
		return nanF
	}
	return v
}

// Get reads a cell as text.
func (c *CSV) Get(row int, col string) string {
	i := c.Col(col)
	if i < 0 || row >= len(c.Rows) || i >= len(c.Rows[row]) {
		return ""
	}
	return c.Rows[row][i]
}

// f formats a float for CSV cells: plain, no exponent, enough digits.
func f(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// fi formats an integer for CSV cells.
func fi(v int64) string { return strconv.FormatInt(v, 10) }

// human formats a number for Markdown cells with thousands separators.
func human(v float64) string {
	if v != v {
		return "—"
	}
	neg := v < 0
	if neg {
		v = -v
	}
	s := strconv.FormatFloat(v, 'f', 0, 64)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// secs formats seconds for Markdown cells.
func secs(v float64) string {
	if v != v {
		return "—"
	}
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f s", v)
	case v >= 1:
		return fmt.Sprintf("%.2f s", v)
	}
	return fmt.Sprintf("%.1f ms", v*1000)
}

// pct formats a 0..1 fraction.
func pct(v float64) string {
	if v != v {
		return "—"
	}
	return fmt.Sprintf("%.0f %%", 100*v)
}

// ratio formats a/b as "12.3×".
func ratio(a, b float64) string {
	if b == 0 || a != a || b != b {
		return "—"
	}
	r := a / b
	if r >= 10 {
		return fmt.Sprintf("%.0f×", r)
	}
	return fmt.Sprintf("%.2f×", r)
}

var nanF = math.NaN()
