package bench

import (
	"fmt"
	"math"
	"path/filepath"
)

// Headline ratios: the few figures a side-by-side table is quoted by, as
// one number each, oriented so that > 1 means run A (Peregrine, by
// convention) is better. Comparing them between an earlier pair of runs
// and a new pair says which ratios shrank when the method changed (issue
// 10: "where a ratio shrinks, say so").

type headline struct {
	figure string
	ratio  float64 // > 1: A better
	bound  string  // "≥" or "≤" when a side never reached its limit
}

var headliners = map[string]func(a, b *CSV) []headline{
	"write-scaling.csv": func(a, b *CSV) []headline {
		h := headline{figure: "write-scaling: knee NVPS, A / B", ratio: safeDiv(knee(a), knee(b))}
		// A run that never left the line has only a lower bound for its
		// knee.
		switch ra, rb := kneeReached(a, knee(a)), kneeReached(b, knee(b)); {
		case !ra && rb:
			h.bound = "≥ "
		case ra && !rb:
			h.bound = "≤ "
		case !ra && !rb:
			h.bound = "? "
		}
		return []headline{h}
	},
	"sender-flood.csv": func(a, b *CSV) []headline {
		var out []headline
		for _, k := range keys(a, b, "values") {
			out = append(out, headline{figure: fmt.Sprintf("sender-flood %s values: readable values/s, A / B", human(k)),
				ratio: safeDiv(cell(a, "values", k, "readable_vps"), cell(b, "values", k, "readable_vps"))})
		}
		return out
	},
	"history-read.csv": func(a, b *CSV) []headline {
		var out []headline
		for _, k := range keys(a, b, "rows") {
			out = append(out, headline{figure: fmt.Sprintf("history-read %s rows: median latency, B / A", human(k)),
				ratio: safeDiv(cell(b, "rows", k, "median_s"), cell(a, "rows", k, "median_s"))})
		}
		return out
	},
	"ingest-max.csv": func(a, b *CSV) []headline {
		return []headline{{figure: "ingest-max: highest rate passed, A / B", ratio: safeDiv(bestPass(a), bestPass(b))}}
	},
	"backfill.csv": func(a, b *CSV) []headline {
		var out []headline
		for _, ph := range []string{PhaseInOrder, PhaseInsideHead, PhaseOutside} {
			out = append(out, headline{figure: "backfill " + ph + ": readable values/s, A / B",
				ratio: safeDiv(phaseCell(a, ph, "readable_vps"), phaseCell(b, ph, "readable_vps"))})
		}
		return out
	},
	"dashboard.csv": func(a, b *CSV) []headline {
		var out []headline
		for _, k := range keys(a, b, "viewers") {
			out = append(out, headline{figure: fmt.Sprintf("dashboard %s at once: median refresh, B / A", human(k)),
				ratio: safeDiv(cell(b, "viewers", k, "refresh_median_s"), cell(a, "viewers", k, "refresh_median_s"))})
		}
		return out
	},
	"disk-bytes.csv": func(a, b *CSV) []headline {
		return []headline{{figure: "disk-bytes: bytes per value, B / A", ratio: safeDiv(phaseLike(b, "part", "total", "bytes_per_value"), phaseLike(a, "part", "total", "bytes_per_value"))}}
	},
	"storm.csv": stormHeadlines,
}

func safeDiv(a, b float64) float64 {
	if b == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return nanF
	}
	return a / b
}

// headlines reads every scenario CSV two runs share and returns their
// headline ratios in the comparers' order.
func headlines(dirA, dirB string) []headline {
	var out []headline
	for _, sc := range comparers {
		a, errA := ReadCSV(filepath.Join(dirA, sc.file))
		b, errB := ReadCSV(filepath.Join(dirB, sc.file))
		if errA != nil || errB != nil {
			continue
		}
		out = append(out, headliners[sc.file](a, b)...)
	}
	return out
}

// ratioChangeSection puts the headline ratios of an earlier pair of runs
// beside those of the new pair. A ratio within ±5 % is "about the same":
// run-to-run noise on a shared machine is larger than that.
func ratioChangeSection(dirA, dirB, oldA, oldB string) Section {
	sec := Section{Title: "Ratios: these runs against the earlier ones"}
	before := headlines(oldA, oldB)
	t := Table{Header: []string{"figure (> 1: A better)", "earlier ratio", "this ratio", "change"}}
	earlier := map[string]headline{}
	for _, h := range before {
		earlier[h.figure] = h
	}
	var shrank []string
	for _, h := range headlines(dirA, dirB) {
		old, ok := earlier[h.figure]
		change := "not measured earlier"
		switch {
		case !ok || math.IsNaN(old.ratio) || math.IsNaN(h.ratio):
		case old.bound != "" || h.bound != "":
			change = "not comparable: a knee was not reached (the ratio is a bound)"
		default:
			switch r := h.ratio / old.ratio; {
			case r < 0.95:
				change = fmt.Sprintf("**shrank** (%.2f× of the earlier ratio)", r)
				shrank = append(shrank, h.figure)
			case r > 1.05:
				change = fmt.Sprintf("grew (%.2f× of the earlier ratio)", r)
			default:
				change = "about the same (±5 %)"
			}
		}
		t.Rows = append(t.Rows, []string{h.figure, ratioOrDash(old, ok), ratioOrDash(h, true), change})
	}
	sec.Tables = append(sec.Tables, t)
	sec.Text = append(sec.Text, fmt.Sprintf("Earlier runs: A = %s, B = %s. Each ratio is oriented so that more than 1 means run A did better.", oldA, oldB))
	if len(shrank) > 0 {
		sec.Notes = append(sec.Notes, fmt.Sprintf("%d ratio(s) shrank against the earlier runs: the earlier figures favoured run A by that much.", len(shrank)))
	}
	return sec
}

func ratioOrDash(h headline, ok bool) string {
	if !ok || math.IsNaN(h.ratio) {
		return "—"
	}
	return h.bound + ratio(h.ratio, 1)
}
