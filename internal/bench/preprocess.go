package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Preprocess is issue 12's side-by-side: values through preprocessing
// on every item, the same items and steps created on either server
// through the API, driven by the same sender.
//
//   - chain: Items float trapper items, each with the typical two-step
//     chain (custom multiplier ×2, then discard unchanged with a 1 h
//     heartbeat); Values values sent as fast as the senders go, one per
//     item per round. Every item is a full-precision gauge (Data.Gauges),
//     so no value repeats its predecessor and every one must be stored:
//     the discard step compares every value, and readable = sent.
//   - dependents: Masters text trapper items, each the master of
//     Dependents dependent float items with one JSONPath step ($.mK); one
//     JSON document {"m0":…,"m1":…} per master per round, MasterRounds
//     rounds; every dependent stores one value per document.
//
// Both report the send time and the time until history.get countOutput
// (float history of the bench hosts) returns every value, and the
// persisted values/s.
type Preprocess struct {
	Items, ItemsPerHost int
	// Triggers is the last() triggers on every chain item (issue 30
	// part 3: every stage on): last(/host/key)>T with thresholds the
	// values never reach, so each value is evaluated Triggers times and
	// no event is made. 0: none.
	Triggers            int
	Values              int64
	Masters, Dependents int
	MasterRounds        int64
	// Settle is the wait after creating the dependent items (Zabbix loads
	// them into its configuration cache every CacheUpdateFrequency).
	Settle       time.Duration
	Stall        time.Duration
	DrainTimeout time.Duration
}

// Name implements Scenario.
func (*Preprocess) Name() string { return "preprocess" }

// PreprocessColumns is the CSV header.
var PreprocessColumns = []string{"target", "part", "items", "steps", "values_sent", "values_expected", "send_s", "sent_vps", "readable", "readable_s",
	"readable_vps", "complete", "server_cpu"}

// chainSteps is the typical two-step chain: custom multiplier, then
// discard unchanged with heartbeat (Zabbix 6.0 types 1 and 20).
var chainSteps = []map[string]string{
	{"type": "1", "params": "2", "error_handler": "0", "error_handler_params": ""},
	{"type": "20", "params": "3600", "error_handler": "0", "error_handler_params": ""},
}

func (p *Preprocess) defaults() error {
	if p.ItemsPerHost <= 0 {
		p.ItemsPerHost = 1000
	}
	if p.Items < 0 || p.Items%p.ItemsPerHost != 0 {
		return errors.New("preprocess: --items must be a multiple of --items-per-host")
	}
	if p.Values <= 0 {
		p.Values = 1_000_000
	}
	if p.Triggers < 0 || p.Triggers > 100 {
		return errors.New("preprocess: --pp-triggers must be between 0 and 100")
	}
	if p.Masters < 0 || p.Dependents < 0 {
		return errors.New("preprocess: --masters and --dependents must not be negative")
	}
	if p.Masters > 0 && p.Masters%100 != 0 && p.Masters > 100 {
		return errors.New("preprocess: --masters must be at most 100 or a multiple of 100 (hosts of 100 masters)")
	}
	if p.Dependents == 0 {
		p.Dependents = 10
	}
	if p.MasterRounds <= 0 {
		p.MasterRounds = 100
	}
	if p.Settle <= 0 {
		p.Settle = 15 * time.Second
	}
	if p.Stall <= 0 {
		p.Stall = 60 * time.Second
	}
	if p.DrainTimeout <= 0 {
		p.DrainTimeout = 10 * time.Minute
	}
	return nil
}

// masterDoc is the JSON document every master receives, escaped for the
// sender's JSON string: n numeric members m0..m(n-1), as an agent's or
// exporter's JSON output holds, whose values the dependents extract.
func masterDoc(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for k := range n {
		if k > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `\"m%d\":%d.%03d`, k, 1000+k*37, (k*7919)%1000)
	}
	b.WriteString("}")
	return b.String()
}

// Run implements Scenario.
func (p *Preprocess) Run(ctx context.Context, env *Env) (Section, error) {
	sec := Section{Title: "preprocess: preprocessing on every value (issue 12)"}
	if err := p.defaults(); err != nil {
		return sec, err
	}
	// Full-precision gauges for every item: no value equals its
	// predecessor, so discard-unchanged keeps them all and "readable"
	// has one count, the values sent.
	saved := env.Data
	env.Data.Gauges = true
	defer func() { env.Data = saved }()
	table := Table{Header: []string{"part", "items", "steps per value", "values", "sender completion", "sent values/s", "all readable after", "persisted values/s", "server CPU"}}
	csv := &CSV{File: "preprocess.csv", Header: PreprocessColumns}
	if p.Items > 0 && p.Values > 0 {
		if err := p.chain(ctx, env, &table, csv, &sec); err != nil {
			return sec, err
		}
	}
	if p.Masters > 0 {
		if err := p.dependents(ctx, env, &table, csv, &sec); err != nil {
			sec.Tables, sec.CSV = append(sec.Tables, table), csv
			return sec, err
		}
	}
	sec.Tables, sec.CSV = append(sec.Tables, table), csv
	sec.Text = append(sec.Text, fmt.Sprintf("chain: %s float trapper items (hosts of %d), each with custom multiplier ×2 then discard unchanged with heartbeat 1 h; "+
		"every item a full-precision random walk, so every value must be stored. dependents: %d text trapper masters (hosts of 100), each with %d dependent float items "+
		"extracting $.mK by JSONPath from one JSON document per master per round (%d rounds). Both created by item.create with Zabbix 6.0's preprocessing objects "+
		"and master_itemid on either server, sent by the harness's sender in %d-value frames over %d connections; \"all readable\": history.get countOutput "+
		"over the part's hosts returns every expected value (polled every 200 ms). %s",
		human(float64(p.Items)), p.ItemsPerHost, p.Masters, p.Dependents, p.MasterRounds, env.packet(), env.Target.Sender.Conns, cpuHelp))
	return sec, nil
}

// measure sends plan's values and waits until want values are readable.
func (p *Preprocess) measure(ctx context.Context, env *Env, part string, items int, steps string, plan SendPlan, total, want int64, hostids []string, from, till int64,
	table *Table, csv *CSV, sec *Section) error {
	count := func(ctx context.Context) (int64, error) { return env.API.HistoryCount(ctx, hostids, from, till) }
	before, err := count(ctx)
	if err != nil {
		return err
	}
	cpu := StartCPU(env.Target.ServerCPU)
	t0 := time.Now()
	label := fmt.Sprintf("preprocess %s: %s values", part, fmtCount(float64(total)))
	res, err := env.sendWithProgress(ctx, label, plan, total)
	if err != nil {
		return err
	}
	sendS := time.Since(t0).Seconds()
	if res.Sent != total {
		sec.Notes = append(sec.Notes, fmt.Sprintf("%s: sent %d of %d values (failed %d, frame errors %d, first error %v).", part, res.Sent, total, res.Failed, res.Errors, res.FirstErr))
	}
	n, at, _, err := env.waitReadable(ctx, label+": until readable", count, before+want, p.Stall, p.DrainTimeout)
	if err != nil {
		return err
	}
	use := cpu.Stop()
	readable := n - before
	readS := at.Sub(t0).Seconds()
	complete := readable >= want
	_, srv, _ := cpuCells(use, env.Cores)
	readCell := secs(readS)
	if !complete {
		readCell = fmt.Sprintf("not all: %s of %s after %s", human(float64(readable)), human(float64(want)), secs(readS))
	}
	table.Rows = append(table.Rows, []string{part, human(float64(items)), steps, human(float64(want)), secs(sendS), human(float64(res.Sent) / sendS), readCell,
		human(float64(readable) / readS), srv})
	csv.Rows = append(csv.Rows, []string{env.Target.Name, part, fi(int64(items)), steps, fi(res.Sent), fi(want), f(sendS), f(float64(res.Sent) / sendS), fi(readable), f(readS),
		f(float64(readable) / readS), strconv.FormatBool(complete), f(use.Server)})
	env.Progress.Logf("preprocess %s: %d values sent in %.2fs, %d of %d readable after %.2fs: %s persisted values/s", part, res.Sent, sendS, readable, want, readS, human(float64(readable)/readS))
	return nil
}

// chain is the two-step chain part.
func (p *Preprocess) chain(ctx context.Context, env *Env, table *Table, csv *CSV, sec *Section) error {
	hosts := p.Items / p.ItemsPerHost
	lay := env.layout("pb-pp-", hosts, p.ItemsPerHost)
	lay.Steps = chainSteps
	prov, err := env.provision(ctx, lay)
	if err != nil {
		return err
	}
	defer env.cleanup(prov)
	steps := "2 (multiplier, discard unchanged + heartbeat)"
	if p.Triggers > 0 {
		t0 := time.Now()
		ids, err := createItemTriggers(ctx, env, lay, prov.HostIDs, p.Triggers, triggerBatch, func(host, key string, j int) (string, string) {
			// 1e15 and up: no realistic value reaches it.
			return fmt.Sprintf("pp %s %s above %d", host, key, j), fmt.Sprintf("last(/%s/%s)>%d", host, key, int64(j+1)*1e15)
		})
		if len(ids) > 0 && !env.Keep {
			defer func() {
				dctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				defer cancel()
				if err := deleteTriggerIDs(dctx, env.API, ids); err != nil {
					env.Progress.Logf("preprocess cleanup: cannot delete %d triggers: %v", len(ids), err)
				}
			}()
		}
		if err != nil {
			return fmt.Errorf("cannot create the chain items' triggers: %w", err)
		}
		env.Progress.Logf("preprocess chain: %d triggers created in %s; waiting %s for the server's configuration", len(ids), time.Since(t0).Round(100*time.Millisecond), p.Settle)
		if err := sleepCtx(ctx, p.Settle); err != nil {
			return err
		}
		steps += fmt.Sprintf(" + %d last() trigger(s)", p.Triggers)
		sec.Text = append(sec.Text, fmt.Sprintf("chain triggers: %d per item, `last(/host/key)>T` with T = 1e15, 2e15, …: never reached by the values, "+
			"so every stored value is evaluated by each and no event is made; created by trigger.create in batches of %d.", p.Triggers, triggerBatch))
	}
	warm, err := env.warmUp(ctx, "preprocess", lay.ItemSet(hosts), prov.HostIDs)
	if err != nil {
		return err
	}
	sec.Text = append(sec.Text, warm)
	rounds := (p.Values + int64(p.Items) - 1) / int64(p.Items)
	base := env.clockSpan(rounds)
	plan := env.plan(lay.ItemSet(hosts), base)
	plan.TotalValues = p.Values
	return p.measure(ctx, env, "chain", p.Items, steps, plan, p.Values, p.Values, prov.HostIDs, base, base+rounds-1, table, csv, sec)
}

// dependents is the JSONPath dependent items part.
func (p *Preprocess) dependents(ctx context.Context, env *Env, table *Table, csv *CSV, sec *Section) error {
	perHost := min(p.Masters, 100)
	hosts := p.Masters / perHost
	lay := env.layout("pb-ppj-", hosts, perHost)
	lay.KeyPrefix, lay.ValueType = "bench.json.", 4
	prov, err := env.provision(ctx, lay)
	if err != nil {
		return err
	}
	defer env.cleanup(prov)
	masters, err := ItemIDsByHost(ctx, env.API, prov.HostIDs, lay)
	if err != nil {
		return err
	}
	var pending []map[string]any
	created := 0
	for h, hostid := range prov.HostIDs {
		for m, master := range masters[hostid] {
			for k := range p.Dependents {
				key := fmt.Sprintf("bench.dep[%d,%d]", m, k)
				pending = append(pending, map[string]any{"hostid": hostid, "name": key, "key_": key, "type": 18, "value_type": 0, "master_itemid": master,
					"history": "90d", "trends": "0", "preprocessing": []map[string]string{{"type": "12", "params": fmt.Sprintf("$.m%d", k), "error_handler": "0", "error_handler_params": ""}}})
			}
		}
		if len(pending) >= 1000 || h == len(prov.HostIDs)-1 {
			if err := env.API.Call(ctx, "item.create", pending, nil); err != nil {
				return fmt.Errorf("cannot create the dependent items: %w", err)
			}
			created += len(pending)
			pending = pending[:0]
		}
	}
	env.Progress.Logf("preprocess dependents: %d masters × %d dependents created; waiting %s for the server's configuration", p.Masters, p.Dependents, p.Settle)
	if err := sleepCtx(ctx, p.Settle); err != nil {
		return err
	}
	doc := masterDoc(p.Dependents)
	// One unmeasured round first: neither server meets the items cold.
	warm := env.clockSpan(1)
	wplan := env.plan(lay.ItemSet(hosts), warm)
	wplan.TotalValues, wplan.FixedText = int64(p.Masters), doc
	if _, err := env.sendWithProgress(ctx, "preprocess dependents: warm-up", wplan, int64(p.Masters)); err != nil {
		return err
	}
	if _, _, _, err := env.waitReadable(ctx, "preprocess dependents: warm-up readable", func(ctx context.Context) (int64, error) {
		return env.API.HistoryCount(ctx, prov.HostIDs, warm, warm)
	}, int64(created), p.Stall, p.DrainTimeout); err != nil {
		return err
	}
	base := env.clockSpan(p.MasterRounds)
	plan := env.plan(lay.ItemSet(hosts), base)
	total := int64(p.Masters) * p.MasterRounds
	plan.TotalValues, plan.FixedText = total, doc
	return p.measure(ctx, env, "dependents", p.Masters*p.Dependents, "1 JSONPath per dependent", plan, total, total*int64(p.Dependents),
		prov.HostIDs, base, base+p.MasterRounds-1, table, csv, sec)
}
