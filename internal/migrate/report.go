package migrate

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Outcome is what happened to one object.
type Outcome int

const (
	Created Outcome = iota
	Updated
	Unchanged
	Failed // not copied; Reason says why
)

func (o Outcome) String() string {
	return [...]string{"created", "updated", "unchanged", "not copied"}[o]
}

// Entry is one object of the report.
type Entry struct {
	Kind    string // "host", "template", ...
	Name    string
	Outcome Outcome
	Reason  string // why not copied, or what changed
}

// Report is a run's account: every object considered, and the secrets
// the source API does not return, which an operator must enter again.
type Report struct {
	Entries []Entry
	// ReEnter lists secrets not copied: "host h1: PSK (tls_psk_identity,
	// tls_psk)", "user u: password". They are never guessed.
	ReEnter []string
	// History is the history part's account, when it ran.
	History *HistoryReport
}

func (r *Report) add(kind, name string, o Outcome, why string) {
	r.Entries = append(r.Entries, Entry{Kind: kind, Name: name, Outcome: o, Reason: why})
}

func (r *Report) reEnter(format string, args ...any) {
	r.ReEnter = append(r.ReEnter, fmt.Sprintf(format, args...))
}

// Count returns how many entries had outcome o.
func (r *Report) Count(o Outcome) int {
	n := 0
	for _, e := range r.Entries {
		if e.Outcome == o {
			n++
		}
	}
	return n
}

// Changed reports whether the run created or updated anything.
func (r *Report) Changed() bool { return r.Count(Created)+r.Count(Updated) > 0 }

// Write prints the report: a summary per kind, then every object not
// copied with its reason, every update with what changed, and the
// secrets to enter again.
func (r *Report) Write(w io.Writer) {
	type tally [4]int
	per := map[string]*tally{}
	var kinds []string
	for _, e := range r.Entries {
		t := per[e.Kind]
		if t == nil {
			t = &tally{}
			per[e.Kind] = t
			kinds = append(kinds, e.Kind)
		}
		t[e.Outcome]++
	}
	fmt.Fprintf(w, "%-18s %8s %8s %9s %10s\n", "kind", "created", "updated", "unchanged", "not copied")
	for _, k := range kinds {
		t := per[k]
		fmt.Fprintf(w, "%-18s %8d %8d %9d %10d\n", k, t[Created], t[Updated], t[Unchanged], t[Failed])
	}
	var failed, updated []string
	for _, e := range r.Entries {
		switch e.Outcome {
		case Failed:
			failed = append(failed, fmt.Sprintf("  %s %q: %s", e.Kind, e.Name, e.Reason))
		case Updated:
			if e.Reason != "" {
				updated = append(updated, fmt.Sprintf("  %s %q: %s", e.Kind, e.Name, e.Reason))
			}
		}
	}
	if len(updated) > 0 {
		fmt.Fprintf(w, "updated (what differed):\n%s\n", strings.Join(updated, "\n"))
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "not copied:\n%s\n", strings.Join(failed, "\n"))
	}
	if len(r.ReEnter) > 0 {
		re := append([]string(nil), r.ReEnter...)
		sort.Strings(re)
		fmt.Fprintf(w, "secrets the source API does not return (enter them again in Peregrine):\n  %s\n", strings.Join(re, "\n  "))
	}
	if r.History != nil {
		r.History.Write(w)
	}
	if !r.Changed() {
		fmt.Fprintln(w, "nothing changed: the target already had this configuration")
	}
}
