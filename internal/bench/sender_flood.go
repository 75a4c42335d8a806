package bench

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// SenderFlood is the CW-Zabbix method: Items trapper items, then for each
// total M in Values send M values (one per item per round, so M/Items
// rounds) as fast as the senders go; report how long the senders took,
// how long until history.get returns all M values, and the loss.
type SenderFlood struct {
	Items        int     // default 300,000
	ItemsPerHost int     // default 1000
	Values       []int64 // default 200k, 900k
	DrainTimeout time.Duration
	// Stall ends the wait for readability when the count has not grown
	// for this long (default 60 s).
	Stall time.Duration
}

// Name implements Scenario.
func (*SenderFlood) Name() string { return "sender-flood" }

// SenderFloodColumns is the CSV header.
var SenderFloodColumns = []string{"target", "items", "values", "conns", "packet", "sent", "processed", "failed", "frame_errors",
	"send_s", "readable", "readable_s", "sent_vps", "readable_vps", "loss_rate", "complete", "count_call_s", "gen_cpu", "server_cpu", "gen_saturated"}

// Run implements Scenario.
func (s *SenderFlood) Run(ctx context.Context, env *Env) (Section, error) {
	sec := Section{Title: "sender-flood (CW-Zabbix method)"}
	if s.Items <= 0 {
		s.Items = 300_000
	}
	if s.ItemsPerHost <= 0 {
		s.ItemsPerHost = 1000
	}
	if s.Items%s.ItemsPerHost != 0 {
		return sec, errors.New("sender-flood: --items must be a multiple of --items-per-host")
	}
	if len(s.Values) == 0 {
		s.Values = []int64{200_000, 900_000}
	}
	if s.DrainTimeout <= 0 {
		s.DrainTimeout = 10 * time.Minute
	}
	if s.Stall <= 0 {
		s.Stall = 60 * time.Second
	}
	hosts := s.Items / s.ItemsPerHost
	lay := env.layout("pb-sf-", hosts, s.ItemsPerHost)
	prov, err := env.provision(ctx, lay)
	if err != nil {
		return sec, err
	}
	defer env.cleanup(prov)
	warm, err := env.warmUp(ctx, "sender-flood", lay.ItemSet(hosts), prov.HostIDs)
	if err != nil {
		return sec, err
	}
	sec.Text = append(sec.Text, warm)
	snd := env.Target.Sender
	csv := &CSV{File: "sender-flood.csv", Header: SenderFloodColumns}
	table := Table{Header: []string{"values sent", "sender completion", "sent values/s", "all readable after", "count call", "readable values/s", "loss", "generator CPU", "server CPU", "generator saturated"}}
	var saturated []string
	for _, m := range s.Values {
		rounds := (m + int64(s.Items) - 1) / int64(s.Items)
		base := env.clockSpan(rounds)
		from, till := base, base+rounds-1
		count := func(ctx context.Context) (int64, error) { return env.API.HistoryCount(ctx, prov.HostIDs, from, till) }
		before, err := count(ctx)
		if err != nil {
			return sec, err
		}
		cpu := StartCPU(env.Target.ServerCPU)
		t0 := time.Now()
		label := fmt.Sprintf("sender-flood %s values → %s items", fmtCount(float64(m)), fmtCount(float64(s.Items)))
		plan := env.plan(lay.ItemSet(hosts), base)
		plan.TotalValues = m
		res, err := env.sendWithProgress(ctx, label, plan, m)
		if err != nil {
			return sec, err
		}
		sendS := time.Since(t0).Seconds()
		n, at, call, err := env.waitReadable(ctx, label+": until readable", count, before+res.Sent, s.Stall, s.DrainTimeout)
		if err != nil {
			return sec, err
		}
		use := cpu.Stop()
		readable := n - before
		readS := at.Sub(t0).Seconds()
		loss := float64(m-readable) / float64(m)
		complete := readable >= m
		gen, srv, sat := cpuCells(use, env.Cores)
		if use.GeneratorSaturated(env.Cores) {
			saturated = append(saturated, fmt.Sprintf("%s values", human(float64(m))))
		}
		readCell := secs(readS)
		if !complete {
			readCell = fmt.Sprintf("not all: %s readable after %s", human(float64(readable)), secs(readS))
			sec.Notes = append(sec.Notes, fmt.Sprintf("%s values: only %s of them were readable when the wait ended (%s after the start; the count had stopped growing for %s or the %s drain timeout passed).",
				human(float64(m)), human(float64(readable)), secs(time.Since(t0).Seconds()), s.Stall, s.DrainTimeout))
		}
		table.Rows = append(table.Rows, []string{human(float64(m)), secs(sendS), human(float64(res.Sent) / sendS), readCell, secs(call.Seconds()),
			human(float64(readable) / readS), fmt.Sprintf("%.4f %%", 100*loss), gen, srv, sat})
		csv.Rows = append(csv.Rows, []string{env.Target.Name, fi(int64(s.Items)), fi(m), fi(int64(snd.Conns)), fi(int64(env.packet())), fi(res.Sent), fi(res.Processed), fi(res.Failed), fi(res.Errors),
			f(sendS), fi(readable), f(readS), f(float64(res.Sent) / sendS), f(float64(readable) / readS), f(loss), fmt.Sprint(complete), f(call.Seconds()),
			f(use.Generator), f(use.Server), fmt.Sprint(use.GeneratorSaturated(env.Cores))})
		env.Progress.Logf("sender-flood %d values: senders done in %.2fs (%s values/s, processed %d, failed %d), %d readable after %.2fs, loss %.4f %%",
			m, sendS, human(float64(res.Sent)/sendS), res.Processed, res.Failed, readable, readS, 100*loss)
		if res.FirstErr != nil {
			sec.Notes = append(sec.Notes, fmt.Sprintf("%s values: %d frames failed; first error: %v", human(float64(m)), res.Errors, res.FirstErr))
		}
		if !complete && m != s.Values[len(s.Values)-1] {
			sec.Notes = append(sec.Notes, fmt.Sprintf("Stopped after %s values: the server did not make them all readable, larger totals would not either.", human(float64(m))))
			break
		}
	}
	sec.CSV = csv
	sec.Tables = append(sec.Tables, table)
	sec.Text = append(sec.Text, fmt.Sprintf(
		"%s float trapper items (%d hosts × %d). For each total, the harness's sender sends one value per item per round "+
			"in %d-value frames over %d connections as fast as the replies come back. \"Sender completion\" is the time until the last reply; "+
			"\"all readable after\" is the time from the start until history.get countOutput over the bench hosts returns every value sent "+
			"(polled every 200 ms; the time is when the first count call that returned them all ended, \"count call\" is how long that call took); loss = (sent − readable) / sent. %s",
		human(float64(s.Items)), hosts, s.ItemsPerHost, env.packet(), snd.Conns, cpuHelp))
	if len(saturated) > 0 {
		sec.Notes = append(sec.Notes, saturationNote(saturated))
	}
	sec.Plots = append(sec.Plots, NamedPlot{File: "sender-flood.svg", Plot: SenderFloodPlot([]*CSV{csv})})
	return sec, nil
}

// SenderFloodPlot draws sender completion and readability times against
// the number of values sent.
func SenderFloodPlot(csvs []*CSV) Plot {
	p := Plot{
		Title:  "sender-flood: time to send and time until readable",
		XLabel: "values sent",
		YLabel: "time since the first value was sent (s)",
	}
	for ci, c := range csvs {
		name := ""
		if len(c.Rows) > 0 {
			name = c.Get(0, "target") + ": "
		}
		send, read := Series{Name: name + "senders done"}, Series{Name: name + "all readable"}
		for i := range c.Rows {
			x := c.Float(i, "values")
			send.X, send.Y = append(send.X, x), append(send.Y, c.Float(i, "send_s"))
			read.X, read.Y = append(read.X, x), append(read.Y, c.Float(i, "readable_s"))
		}
		send.Color, read.Color, read.Dashed = palette[ci%len(palette)], palette[ci%len(palette)], true
		p.Series = append(p.Series, send, read)
	}
	return p
}
