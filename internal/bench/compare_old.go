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
}

var headliners = map[string]func(a, b *CSV) []headline{
	"write-scaling.csv": func(a, b *CSV) []headline {
		return []headline{{"write-scaling: knee NVPS, A / B", safeDiv(knee(a), knee(b))}}
	},
	"sender-flood.csv": func(a, b *CSV) []headline {
		var out []headline
		for _, k := range keys(a, b, "values") {
			out = append(out, headline{fmt.Sprintf("sender-flood %s values: readable values/s, A / B", human(k)),
				safeDiv(cell(a, "values", k, "readable_vps"), cell(b, "values", k, "readable_vps"))})
		}
		return out
	},
	"history-read.csv": func(a, b *CSV) []headline {
		var out []headline
		for _, k := range keys(a, b, "rows") {
			out = append(out, headline{fmt.Sprintf("history-read %s rows: median latency, B / A", human(k)),
				safeDiv(cell(b, "rows", k, "median_s"), cell(a, "rows", k, "median_s"))})
		}
		return out
	},
	"ingest-max.csv": func(a, b *CSV) []headline {
		return []headline{{"ingest-max: highest rate passed, A / B", safeDiv(bestPass(a), bestPass(b))}}
	},
	"backfill.csv": func(a, b *CSV) []headline {
		var out []headline
		for _, ph := range []string{PhaseInOrder, PhaseInsideHead, PhaseOutside} {
			out = append(out, headline{"backfill " + ph + ": readable values/s, A / B",
				safeDiv(phaseCell(a, ph, "readable_vps"), phaseCell(b, ph, "readable_vps"))})
		}
		return out
	},
	"dashboard.csv": func(a, b *CSV) []headline {
		var out []headline
		for _, k := range keys(a, b, "viewers") {
			out = append(out, headline{fmt.Sprintf("dashboard %s at once: median refresh, B / A", human(k)),
				safeDiv(cell(b, "viewers", k, "refresh_median_s"), cell(a, "viewers", k, "refresh_median_s"))})
		}
		return out
	},
	"disk-bytes.csv": func(a, b *CSV) []headline {
		return []headline{{"disk-bytes: bytes per value, B / A", safeDiv(phaseLike(b, "part", "total", "bytes_per_value"), phaseLike(a, "part", "total", "bytes_per_value"))}}
	},
}

func safeDiv(a, b float64) float64 {
	if b == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return nanF
	}
	return a / b
}

// headlines reads every scenario CSV two runs share and returns their
// headline ratios by figure.
func headlines(dirA, dirB string) map[string]float64 {
	out := map[string]float64{}
	for _, sc := range comparers {
		a, errA := ReadCSV(filepath.Join(dirA, sc.file))
		b, errB := ReadCSV(filepath.Join(dirB, sc.file))
		if errA != nil || errB != nil {
			continue
		}
		for _, h := range headliners[sc.file](a, b) {
			out[h.figure] = h.ratio
		}
	}
	return out
}

// ratioChangeSection puts the headline ratios of an earlier pair of runs
// beside those of the new pair. A ratio within ±5 % is "about the same":
// run-to-run noise on a shared machine is larger than that.
func ratioChangeSection(dirA, dirB, oldA, oldB string) Section {
	sec := Section{Title: "Ratios: these runs against the earlier ones"}
	now, before := headlines(dirA, dirB), headlines(oldA, oldB)
	t := Table{Header: []string{"figure (> 1: A better)", "earlier ratio", "this ratio", "change"}}
	var shrank []string
	for _, sc := range comparers {
		a, errA := ReadCSV(filepath.Join(dirA, sc.file))
		b, errB := ReadCSV(filepath.Join(dirB, sc.file))
		if errA != nil || errB != nil {
			continue
		}
		for _, h := range headliners[sc.file](a, b) {
			old, ok := before[h.figure]
			change := "not measured earlier"
			if ok && !math.IsNaN(old) && !math.IsNaN(h.ratio) {
				switch r := h.ratio / old; {
				case r < 0.95:
					change = fmt.Sprintf("**shrank** (%.2f× of the earlier ratio)", r)
					shrank = append(shrank, h.figure)
				case r > 1.05:
					change = fmt.Sprintf("grew (%.2f× of the earlier ratio)", r)
				default:
					change = "about the same (±5 %)"
				}
			}
			t.Rows = append(t.Rows, []string{h.figure, ratioOrDash(old, ok), ratioOrDash(now[h.figure], true), change})
		}
	}
	sec.Tables = append(sec.Tables, t)
	sec.Text = append(sec.Text, fmt.Sprintf("Earlier runs: A = %s, B = %s. Each ratio is oriented so that more than 1 means run A did better.", oldA, oldB))
	if len(shrank) > 0 {
		sec.Notes = append(sec.Notes, fmt.Sprintf("%d ratio(s) shrank against the earlier runs: the earlier figures favoured run A by that much.", len(shrank)))
	}
	return sec
}

func ratioOrDash(v float64, ok bool) string {
	if !ok || math.IsNaN(v) {
		return "—"
	}
	return ratio(v, 1)
}
