package buildcheck

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// docFiles are the Markdown files whose links must resolve: the front
// door, the benchmark book, the manual under docs/, and the index of the
// recorded bench reports.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	files := []string{"README.md", "BENCHMARKS.md", "bench/reports/README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

var (
	fence      = regexp.MustCompile("^\\s*(```|~~~)")
	codeSpan   = regexp.MustCompile("`[^`]*`")
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refDef     = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	heading    = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	scheme     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	// A link inside a heading counts by its text.
	headingLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// mdLine is one line of a Markdown file outside fenced code.
type mdLine struct {
	n    int
	text string
}

// proseLines returns the lines of a Markdown text that are not inside a
// fenced code block.
func proseLines(text string) []mdLine {
	var out []mdLine
	in := false
	for i, l := range strings.Split(text, "\n") {
		if fence.MatchString(l) {
			in = !in
			continue
		}
		if !in {
			out = append(out, mdLine{i + 1, l})
		}
	}
	return out
}

// anchors returns the anchors GitHub gives the headings of a Markdown
// text: lower case, letters, digits, spaces, '-' and '_' kept and the
// rest dropped, spaces made '-', repeats numbered -1, -2, ...
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range proseLines(text) {
		m := heading.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		// Link text stands for the link.
		h := headingLink.ReplaceAllString(m[1], "$1")
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			seen[a]++
			a = a + "-" + strconv.Itoa(n)
		} else {
			seen[a] = 1
		}
		out[a] = true
	}
	return out
}

// links returns the link and image targets of a Markdown text with their
// line numbers, code spans and fenced code left out.
func links(text string) []mdLine {
	var out []mdLine
	for _, l := range proseLines(text) {
		line := codeSpan.ReplaceAllString(l.text, "")
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			out = append(out, mdLine{l.n, m[1]})
		}
		if m := refDef.FindStringSubmatch(line); m != nil {
			out = append(out, mdLine{l.n, m[1]})
		}
	}
	return out
}

// TestMarkdownLinksResolve checks every relative link and image in
// README.md, BENCHMARKS.md and docs/**/*.md: the file or directory must
// exist in the tree, and an anchor must name a heading of its Markdown
// file. External links (with a scheme) are not fetched.
func TestMarkdownLinksResolve(t *testing.T) {
	root := repoRoot(t)
	files := docFiles(t, root)
	if len(files) < 20 {
		t.Fatalf("found only %d Markdown files: %v", len(files), files)
	}
	cache := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := cache[path]; ok {
			return a, nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		cache[path] = anchors(string(b))
		return cache[path], nil
	}
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links(string(b)) {
			target := l.text
			if scheme.MatchString(target) {
				continue
			}
			checked++
			path, anchor, _ := strings.Cut(target, "#")
			full := filepath.Join(root, filepath.Dir(f), filepath.FromSlash(path))
			if path == "" {
				full = filepath.Join(root, f)
			} else if strings.HasPrefix(path, "/") {
				t.Errorf("%s:%d: %s: an absolute link; make it relative to the file", f, l.n, target)
				continue
			}
			rel, err := filepath.Rel(root, full)
			if err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s:%d: %s: points outside the repository", f, l.n, target)
				continue
			}
			st, err := os.Stat(full)
			if err != nil {
				t.Errorf("%s:%d: %s: no such file in the tree", f, l.n, target)
				continue
			}
			if anchor == "" || st.IsDir() || !strings.HasSuffix(full, ".md") {
				continue
			}
			a, err := anchorsOf(full)
			if err != nil {
				t.Fatal(err)
			}
			if !a[anchor] {
				t.Errorf("%s:%d: %s: %s has no heading with the anchor #%s", f, l.n, target, filepath.ToSlash(rel), anchor)
			}
		}
	}
	if checked < 50 {
		t.Fatalf("checked only %d links: the parser is broken", checked)
	}
}

// TestAnchors pins the heading anchors GitHub makes.
func TestAnchors(t *testing.T) {
	a := anchors("# API\n## Side by side with Zabbix 6.0: ICMP, SNMP (issues 14 and 12)\n```\n# not a heading\n```\n" +
		"### `history.get`\n## Notes\n## Notes\n### R1: the whole server (fair harness)\n")
	for _, want := range []string{"api", "side-by-side-with-zabbix-60-icmp-snmp-issues-14-and-12", "historyget", "notes", "notes-1", "r1-the-whole-server-fair-harness"} {
		if !a[want] {
			t.Errorf("no anchor %q in %v", want, a)
		}
	}
	if a["not-a-heading"] {
		t.Error("a comment in a code block made an anchor")
	}
}
