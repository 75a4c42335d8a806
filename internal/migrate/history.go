package migrate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// historyPage is how many values one history.get asks for, and one
// history.import stores.
const historyPage = 5000

// historyWorkers is how many items are copied at once.
const historyWorkers = 4

// HistoryReport is the history copy's account.
type HistoryReport struct {
	Items, ItemsDone, ItemsSkipped int
	Values                         int64 // stored by this run
	Refused                        int64 // refused by the target (with FirstRefusal)
	FirstRefusal                   string
	Elapsed                        time.Duration
	From, Till                     int64
}

// Write prints the history part of the report.
func (h *HistoryReport) Write(w io.Writer) {
	rate := 0.0
	if s := h.Elapsed.Seconds(); s > 0 {
		rate = float64(h.Values) / s
	}
	fmt.Fprintf(w, "history %s .. %s: %d items (%d done, %d without a target item), %d values copied in %s (%.0f values/s), %d refused\n",
		time.Unix(h.From, 0).UTC().Format(time.RFC3339), time.Unix(h.Till, 0).UTC().Format(time.RFC3339),
		h.Items, h.ItemsDone, h.ItemsSkipped, h.Values, h.Elapsed.Round(time.Millisecond), rate, h.Refused)
	if h.FirstRefusal != "" {
		fmt.Fprintf(w, "  first refusal: %s\n", h.FirstRefusal)
	}
	fmt.Fprintln(w, "  trends: Peregrine computes them from the copied history; the source's trends of hours before its history are not copied")
}

// checkpoint is the resumable state of a history copy: its window (kept,
// so a resumed run reads the same one) and the items finished. Where an
// unfinished item got to is not kept: the target's newest value of the
// item in the window says it, so a value acknowledged just before a
// crash is never sent twice whatever the file holds.
type checkpoint struct {
	From, Till int64
	Done       map[string]bool // "host\x00key"
}

func loadCheckpoint(path string) (*checkpoint, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the checkpoint: %w", err)
	}
	var c checkpoint
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("checkpoint %s is not one this tool wrote (%w): remove it to start over", path, err)
	}
	return &c, nil
}

// save replaces the checkpoint file atomically.
func (c *checkpoint) save(path string) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("cannot write the checkpoint: %w", err)
	}
	return os.Rename(tmp, path)
}

// copyHistory copies the history of the copied hosts' items in the
// window, item by item, oldest first, in pages of the source's
// history.get, each page stored by the target's history.import before the
// next is read.
func copyHistory(ctx context.Context, src, tgt *side, hosts []obj, o Options) (*HistoryReport, error) {
	start := time.Now()
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	cp := &checkpoint{Till: now.Unix(), From: now.Unix() - int64(o.HistoryDays)*86400, Done: map[string]bool{}}
	if o.Checkpoint != "" {
		old, err := loadCheckpoint(o.Checkpoint)
		if err != nil {
			return nil, err
		}
		if old != nil {
			cp = old
			if cp.Done == nil {
				cp.Done = map[string]bool{}
			}
		}
	}
	rep := &HistoryReport{From: cp.From, Till: cp.Till}
	defer func() { rep.Elapsed = time.Since(start) }()
	if len(hosts) == 0 {
		return rep, nil
	}
	hostIDs := make([]string, 0, len(hosts))
	hostName := map[string]string{}
	for _, h := range hosts {
		hostIDs = append(hostIDs, str(h["hostid"]))
		hostName[str(h["hostid"])] = str(h["host"])
	}
	var srcItems []obj
	if err := src.c.Call(ctx, "item.get", obj{"output": []string{"itemid", "hostid", "key_", "value_type"},
		"hostids": hostIDs, "webitems": true}, &srcItems); err != nil {
		return rep, fmt.Errorf("source: %w", err)
	}
	var tgtHosts []obj
	names := make([]string, 0, len(hosts))
	for _, h := range hosts {
		names = append(names, str(h["host"]))
	}
	if err := tgt.c.Call(ctx, "host.get", obj{"output": []string{"hostid", "host"}, "filter": obj{"host": names}}, &tgtHosts); err != nil {
		return rep, fmt.Errorf("target: %w", err)
	}
	tgtHostIDs := make([]string, 0, len(tgtHosts))
	tgtHostName := map[string]string{}
	for _, h := range tgtHosts {
		tgtHostIDs = append(tgtHostIDs, str(h["hostid"]))
		tgtHostName[str(h["hostid"])] = str(h["host"])
	}
	tgtItem := map[string]obj{}
	if len(tgtHostIDs) > 0 {
		var rows []obj
		if err := tgt.c.Call(ctx, "item.get", obj{"output": []string{"itemid", "hostid", "key_", "value_type"},
			"hostids": tgtHostIDs, "webitems": true}, &rows); err != nil {
			return rep, fmt.Errorf("target: %w", err)
		}
		for _, r := range rows {
			tgtItem[tgtHostName[str(r["hostid"])]+"\x00"+str(r["key_"])] = r
		}
	}
	rep.Items = len(srcItems)
	progress := func(final bool) {
		if o.Progress == nil {
			return
		}
		el := time.Since(start).Seconds()
		end := "\r"
		if final {
			end = "\n"
		}
		fmt.Fprintf(o.Progress, "history: items %d/%d, %d values, %.0f values/s%s", rep.ItemsDone+rep.ItemsSkipped, rep.Items, rep.Values, float64(rep.Values)/max(el, 1e-3), end)
	}
	// A few items at a time: each item costs two round trips before its
	// first value, so most of a run is waiting on the APIs, not work.
	var (
		mu       sync.Mutex // rep, cp, last, firstErr
		next     atomic.Int64
		wg       sync.WaitGroup
		firstErr error
		last     = time.Now()
	)
	for range historyWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(srcItems) || ctx.Err() != nil {
					return
				}
				it := srcItems[i]
				key := hostName[str(it["hostid"])] + "\x00" + str(it["key_"])
				t, ok := tgtItem[key]
				vt := str(it["value_type"])
				mu.Lock()
				stop, done := firstErr != nil, cp.Done[key]
				switch {
				case stop:
				case done:
					rep.ItemsDone++
				case !ok || str(t["value_type"]) != vt:
					rep.ItemsSkipped++
				}
				mu.Unlock()
				if stop {
					return
				}
				if done || !ok || str(t["value_type"]) != vt {
					continue
				}
				var one HistoryReport
				err := copyItemHistory(ctx, src, tgt, str(it["itemid"]), str(t["itemid"]), vt, cp, &one, func() {})
				mu.Lock()
				rep.Values += one.Values
				rep.Refused += one.Refused
				if rep.FirstRefusal == "" {
					rep.FirstRefusal = one.FirstRefusal
				}
				if err == nil {
					cp.Done[key] = true
					rep.ItemsDone++
					if o.Checkpoint != "" {
						err = cp.save(o.Checkpoint)
					}
				}
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if time.Since(last) > time.Second {
					last = time.Now()
					progress(false)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		progress(true)
		return rep, firstErr
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	progress(true)
	return rep, nil
}

// stamp is a value's time.
type stamp struct{ clock, ns int64 }

func (a stamp) after(b stamp) bool { return a.clock > b.clock || (a.clock == b.clock && a.ns > b.ns) }

func copyItemHistory(ctx context.Context, src, tgt *side, srcID, tgtID, vt string, cp *checkpoint, rep *HistoryReport, tick func()) error {
	// Where the target is: its newest value of the item in the window.
	var newest []obj
	if err := tgt.c.Call(ctx, "history.get", obj{"history": vt, "itemids": tgtID, "time_from": cp.From, "time_till": cp.Till,
		"sortfield": "clock", "sortorder": "DESC", "limit": 1, "output": extend}, &newest); err != nil {
		return fmt.Errorf("target: %w", err)
	}
	done := stamp{clock: cp.From - 1, ns: 999999999}
	if len(newest) > 0 {
		done = stamp{int64(atoi(str(newest[0]["clock"]))), int64(atoi(str(newest[0]["ns"])))}
	}
	from := done.clock
	if from < cp.From {
		from = cp.From
	}
	for from <= cp.Till {
		var rows []obj
		if err := src.c.Call(ctx, "history.get", obj{"history": vt, "itemids": srcID, "time_from": from, "time_till": cp.Till,
			"sortfield": "clock", "sortorder": "ASC", "limit": historyPage, "output": extend}, &rows); err != nil {
			return fmt.Errorf("source: %w", err)
		}
		if len(rows) == 0 {
			return nil
		}
		lastClock := int64(atoi(str(rows[len(rows)-1]["clock"])))
		full := len(rows) == historyPage
		if full && int64(atoi(str(rows[0]["clock"]))) == lastClock {
			// One second holds a whole page: read that second alone.
			if err := src.c.Call(ctx, "history.get", obj{"history": vt, "itemids": srcID, "time_from": lastClock, "time_till": lastClock,
				"output": extend}, &rows); err != nil {
				return fmt.Errorf("source: %w", err)
			}
		} else if full {
			// The last second may continue on the next page: leave it
			// whole to the next read.
			n := len(rows)
			for n > 0 && int64(atoi(str(rows[n-1]["clock"]))) == lastClock {
				n--
			}
			rows, lastClock = rows[:n], lastClock-1
		}
		batch := make([]obj, 0, len(rows))
		for _, r := range rows {
			s := stamp{int64(atoi(str(r["clock"]))), int64(atoi(str(r["ns"])))}
			if !s.after(done) {
				continue
			}
			batch = append(batch, obj{"itemid": tgtID, "clock": s.clock, "ns": s.ns, "value": str(r["value"])})
		}
		if len(batch) > 0 {
			var res struct {
				Data []map[string]string `json:"data"`
			}
			if err := tgt.c.Call(ctx, "history.import", batch, &res); err != nil {
				return fmt.Errorf("target: %w", err)
			}
			for _, d := range res.Data {
				if e, bad := d["error"]; bad {
					rep.Refused++
					if rep.FirstRefusal == "" {
						rep.FirstRefusal = e
					}
				} else {
					rep.Values++
				}
			}
		}
		tick()
		if !full {
			return nil
		}
		from = lastClock + 1
	}
	return nil
}
