package bench

import "fmt"

// compareStorm puts two storm runs side by side: per trigger count, one
// row per run and a row of ratios B / A of the times (> 1: A faster), the
// table BENCHMARKS.md's storm section used to be written from by hand.
func compareStorm(a, b *CSV) Section {
	na, nb := name(a), name(b)
	sec := Section{Title: "storm side by side"}
	t := Table{Header: []string{"triggers", "server", "trigger.create of all", "send all 1s", "all problems visible", "send all 0s", "all resolved",
		"problem.get 1,000", "problem.get all open", "server CPU"}}
	for _, k := range keys(a, b, "triggers") {
		for _, c := range []*CSV{a, b} {
			t.Rows = append(t.Rows, stormRow(c, k))
		}
		r := []string{human(k), "ratio " + nb + " / " + na}
		for _, col := range []string{"trigger_create_s", "fire_send_s", "fire_visible_s", "recover_send_s", "recover_visible_s", "get_1k_median_s", "get_all_median_s"} {
			r = append(r, ratio(stormTime(b, k, col), stormTime(a, k, col)))
		}
		t.Rows = append(t.Rows, append(r, ""))
	}
	sec.Tables = append(sec.Tables, t)
	sec.Text = append(sec.Text, "Each trigger is `last(/host/key)>0` on its own trapper item. \"All problems visible\" and \"all resolved\" run from the last frame's "+
		"acknowledgement until problem.get `countOutput` over the storm's hosts returns all of them and then none; problem.get is measured at the peak "+
		"(`output: extend`, median). A ratio is the second run's time over the first's (higher: the first is faster); a server that acknowledges a "+
		"frame on receipt rather than once it is durable makes the \"send\" columns different promises.")
	for _, c := range []*CSV{a, b} {
		for i := range c.Rows {
			if c.Get(i, "fire_reached") != "true" || c.Get(i, "recover_reached") != "true" {
				sec.Notes = append(sec.Notes, fmt.Sprintf("%s with %s triggers did not reach its problem count within the run's --storm-timeout.", name(c), human(c.Float(i, "triggers"))))
			}
		}
	}
	return sec
}

// stormRow is one run's row for k triggers.
func stormRow(c *CSV, k float64) []string {
	i := rowBy(c, "triggers", k)
	if i < 0 {
		return []string{human(k), name(c), "not run", "", "", "", "", "", "", ""}
	}
	reached := func(col, flag string) string {
		if c.Get(i, flag) != "true" {
			return "**not reached** (gave up after " + secs(c.Float(i, col)) + ")"
		}
		return secs(c.Float(i, col))
	}
	get := func(col string) string {
		if c.Get(i, "fire_reached") != "true" {
			return "—" // measured at a peak that never came
		}
		return secs(c.Float(i, col))
	}
	return []string{human(k), name(c), secs(c.Float(i, "trigger_create_s")), secs(c.Float(i, "fire_send_s")), reached("fire_visible_s", "fire_reached"),
		secs(c.Float(i, "recover_send_s")), reached("recover_visible_s", "recover_reached"), get("get_1k_median_s"), get("get_all_median_s"),
		pctCPU(c.Float(i, "server_cpu"))}
}

// stormTime is a time of the run with k triggers, NaN when the run is
// missing or the time is only how long it waited for a count it never
// reached (then a ratio would compare a timeout).
func stormTime(c *CSV, k float64, col string) float64 {
	i := rowBy(c, "triggers", k)
	if i < 0 {
		return nanF
	}
	switch {
	case col == "fire_visible_s" || col == "get_1k_median_s" || col == "get_all_median_s":
		if c.Get(i, "fire_reached") != "true" {
			return nanF
		}
	case col == "recover_visible_s":
		if c.Get(i, "recover_reached") != "true" {
			return nanF
		}
	}
	return c.Float(i, col)
}

// stormHeadlines are the storm's headline ratios: how many times longer
// B took than A until all problems were visible, and until all resolved.
func stormHeadlines(a, b *CSV) []headline {
	var out []headline
	for _, k := range keys(a, b, "triggers") {
		for _, f := range []struct{ col, what string }{{"fire_visible_s", "all problems visible"}, {"recover_visible_s", "all resolved"}} {
			out = append(out, headline{figure: fmt.Sprintf("storm %s triggers: %s, B / A", human(k), f.what),
				ratio: safeDiv(stormTime(b, k, f.col), stormTime(a, k, f.col))})
		}
	}
	return out
}
