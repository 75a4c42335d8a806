package pipeline

import (
	"strings"
	"time"
	"unsafe"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/preprocess"
	"github.com/peregrine-mon/peregrine/internal/usermacro"
)

// Raw marks a Sample whose value is still text, in S, for the shard to
// preprocess and convert: the value of an item with preprocessing steps
// or dependent items (see Prepare). It is outside history's value types,
// so a store can never be handed one by mistake: the shard replaces
// every Raw sample before it writes.
const Raw history.ValueType = 0x80

// RawError marks a Sample of a check that failed, S holding the error:
// for an item whose steps may turn it into a value ("Check for not
// supported value") or whose dependent items inherit it (see
// PrepareError).
const RawError history.ValueType = 0x81

// maxDependentLevels is how deep fan-out goes below a submitted item,
// the catalog's limit (Zabbix's).
const maxDependentLevels = 3

// InShard reports whether values of it must pass the shard's
// preprocessing: it has steps, or dependent items to feed.
func InShard(it *catalog.Item) bool {
	return len(it.Preprocessing) > 0 || it.HasDependents()
}

// Prepare readies raw, the text of a value for the accepted item it, for
// Submit: every way in (trapper, history.push, active agents, pollers,
// SNMP traps) calls it, so the rules live in one place. s gets ItemID and the value;
// the caller sets the timestamp.
//
// An item with steps or dependents gets a Raw sample whose S aliases
// raw, without a copy (a JSON master value may be 100 KB): raw MUST stay
// unchanged until the Submit that carries s has returned, which every
// caller's request buffer does (Submit returns once the shard is done
// with the value, and nothing the shard keeps refers to the text: it
// stores converted copies, and clones what its step state and the item
// states keep). Its value can only be judged after
// the steps, in the shard that owns the item, which runs them and
// converts the result, and where a failure makes the item not supported
// as in Zabbix; such a value is never refused here. Any other value is
// converted now, with the same preprocess.Convert, so that the way in
// can still refuse it to its client (the trapper's "failed" count, a
// history.push error): the result is what the shard would make of it
// without steps, and the conversion stays on the receiving goroutine.
func Prepare(it *catalog.Item, raw []byte, s *history.Sample) error {
	s.ItemID = it.ID
	if !InShard(it) {
		return preprocess.Convert(it.ValueType, raw, s)
	}
	s.Type, s.S = Raw, unsafe.String(unsafe.SliceData(raw), len(raw))
	return nil
}

// PrepareError readies a failed check of it for Submit when its
// preprocessing must see the failure (InShard: a "Check for not
// supported value" step may turn it into a value, dependents inherit
// it) and reports whether it did; otherwise the caller records the
// failure itself.
func PrepareError(it *catalog.Item, msg string, s *history.Sample) bool {
	if !InShard(it) {
		return false
	}
	s.ItemID, s.Type, s.S = it.ID, RawError, msg
	return true
}

// itemPrep is a shard's preprocessing memory of one item: its compiled
// chain and the state of its change and discard steps.
type itemPrep struct {
	// src is the catalog chain compiled into chain, compared by the
	// address of its first step: the catalog keeps an unchanged chain's
	// slice across snapshots, so a changed address means changed steps.
	src *catalog.PreprocStep
	n   int
	// scope is the macro scope a chain with user macros was compiled
	// with (nil for chains without): a snapshot whose macros changed
	// has another scope, which compiles the chain again.
	scope *usermacro.Scope
	chain []preprocess.Step
	err   error // the chain does not compile: the item is not supported with it
	hash  uint64
	js    bool // the chain has a JavaScript step: it runs off the shard's path (lanes.go)
	state preprocess.State
}

// prepPageBits sizes the pages of prepTable: 256 items a page.
const prepPageBits = 8

// prepTable maps item IDs to their preprocessing memory in pages of
// consecutive IDs: the map of pages is small (SQLite hands out IDs in
// sequence, so a million items make 4k pages) and stays in cache, where
// a map of every item cost a cache miss or two per value (a tenth of a
// loaded shard's time), and a sender's values of one host, whose IDs are
// close, mostly hit the last page.
type prepTable struct {
	pages    map[uint64]*[1 << prepPageBits]*itemPrep
	last     uint64 // page number of lastPage
	lastPage *[1 << prepPageBits]*itemPrep
}

func (t *prepTable) get(id uint64) *itemPrep {
	pn := id >> prepPageBits
	if t.lastPage == nil || t.last != pn {
		p := t.pages[pn]
		if p == nil {
			return nil
		}
		t.last, t.lastPage = pn, p
	}
	return t.lastPage[id&(1<<prepPageBits-1)]
}

func (t *prepTable) put(id uint64, ip *itemPrep) {
	pn := id >> prepPageBits
	p := t.pages[pn]
	if p == nil {
		if t.pages == nil {
			t.pages = map[uint64]*[1 << prepPageBits]*itemPrep{}
		}
		p = new([1 << prepPageBits]*itemPrep)
		t.pages[pn] = p
	}
	p[id&(1<<prepPageBits-1)] = ip
}

// each calls fn with every entry; fn may delete the entry it is given
// (by returning true).
func (t *prepTable) each(fn func(id uint64, ip *itemPrep) (del bool)) {
	for pn, p := range t.pages {
		used := false
		for i, ip := range p {
			if ip == nil {
				continue
			}
			if fn(pn<<prepPageBits|uint64(i), ip) {
				p[i] = nil
			} else {
				used = true
			}
		}
		if !used {
			delete(t.pages, pn)
			if t.lastPage == p {
				t.lastPage = nil
			}
		}
	}
}

// compiled is a chain compiled once per shard for every item that
// shares the catalog's slice of steps (the catalog interns identical
// chains: a template's items share one), so a shard holds one copy of
// the compiled steps per distinct chain, not per item.
type compiled struct {
	chain []preprocess.Step
	err   error
	hash  uint64
	js    bool
}

// prepOf returns it's memory, compiling its chain if it is new or
// changed (which also forgets the state, as Zabbix does when an item's
// steps change).
func (s *shard) prepOf(it *catalog.Item) *itemPrep {
	ip := s.prep.get(it.ID)
	first := &it.Preprocessing[0]
	if ip != nil && ip.src == first && ip.n == len(it.Preprocessing) && (ip.scope == nil || ip.scope == it.Host.UserMacros()) {
		return ip
	}
	if ip == nil {
		ip = &itemPrep{}
		s.prep.put(it.ID, ip)
	}
	ip.scope = nil
	if catalog.StepsHaveMacros(it.Preprocessing) && it.Host != nil {
		// Per item, not shared: the values are the host's.
		ip.scope = it.Host.UserMacros()
		steps := catalog.ExpandSteps(it.Preprocessing, ip.scope)
		ip.src, ip.n, ip.hash = first, len(it.Preprocessing), chainHash(steps)
		ip.chain, ip.err = preprocess.Compile(steps)
		ip.js = hasJS(ip.chain)
	} else {
		c := s.chains[first]
		if c == nil || len(c.chain) != len(it.Preprocessing) && c.err == nil {
			c = &compiled{hash: chainHash(it.Preprocessing)}
			c.chain, c.err = preprocess.Compile(it.Preprocessing)
			c.js = hasJS(c.chain)
			if s.chains == nil {
				s.chains = map[*catalog.PreprocStep]*compiled{}
			}
			s.chains[first] = c
		}
		ip.src, ip.n, ip.hash = first, len(it.Preprocessing), c.hash
		ip.chain, ip.err, ip.js = c.chain, c.err, c.js
	}
	ip.state.Reset()
	if st, ok := s.restored[it.ID]; ok {
		// Saved before a restart for this very chain: carry on from it.
		delete(s.restored, it.ID)
		if st.hash == ip.hash {
			ip.state = st.state
		}
	}
	return ip
}

// hasJS reports whether chain has a JavaScript step.
func hasJS(chain []preprocess.Step) bool {
	for i := range chain {
		if chain[i].Type == preprocess.StepJavaScript {
			return true
		}
	}
	return false
}

// preprocess replaces the Raw and RawError samples of j's batch by what
// their items' steps make of them (nothing for a discarded value), plus
// the values of their dependent items, converted to their value types,
// into j.buf; other samples are copied as they are. Waiters' ends are
// moved to the new positions. Values that wait for a JavaScript step go
// through their items' lanes (lanes.go): finished within JSWait they are
// written with the batch, after its other values, each under one more
// waiter of its ticket; the others later. It returns the batch to
// write: j.in itself when it holds nothing to preprocess. It records in
// j.gen the generation of step state it ran on (see forgetState).
func (s *shard) preprocess(j *job) []history.Sample {
	batch, waiters := j.in, j.waiters
	j.gen = noState
	raw := len(j.ready) > 0
	for i := 0; i < len(batch) && !raw; i++ {
		raw = batch[i].Type >= Raw
	}
	if !raw {
		return batch
	}
	if s.p.opts.Catalog == nil {
		s.p.opts.Logger.Error("BUG: values to preprocess but no Options.Catalog; dropped", "shard", s.id)
		out := j.buf[:0]
		for i := range batch {
			if batch[i].Type < Raw {
				out = append(out, batch[i])
			}
		}
		for w := range waiters {
			waiters[w].end = min(waiters[w].end, len(out)) // all acknowledged with the batch's write
		}
		j.buf = out
		return out
	}
	snap := s.p.opts.Catalog()
	s.prepMu.Lock()
	defer s.prepMu.Unlock()
	if v := snap.Version(); v != s.prepVersion {
		s.prune(snap)
		s.prepVersion = v
	}
	j.gen = s.stateGen
	s.batchMark++
	b := &s.batch
	*b = prepBatch{snap: snap, j: j, out: j.buf[:0], gen: j.gen, mark: s.batchMark,
		lanes: b.lanes[:0], waitFor: b.waitFor[:0], fresh: b.fresh[:0]}
	w := 0
	for i := range batch {
		v := &batch[i]
		if w < len(waiters) {
			b.t = waiters[w].t
		}
		if v.Type < Raw {
			b.out = append(b.out, *v)
		} else if it := snap.Item(v.ItemID); it != nil {
			// An item deleted since its value was accepted: dropped.
			in := preprocess.Input{Time: time.Unix(v.Clock, int64(v.NS))}
			if v.Type == RawError {
				in.Err = v.S
			} else {
				in.Text = v.S
			}
			s.runItem(b, it, in, v, 0)
		}
		for w < len(waiters) && waiters[w].end == i+1 {
			waiters[w].end = len(b.out)
			w++
		}
	}
	for _, l := range j.ready {
		b.touch(l)
	}
	if len(b.lanes) > 0 {
		s.runLanes(b)
	}
	j.buf = b.out
	out := b.out
	// Do not pin the batch's values and tickets until the next one.
	clear(b.waitFor)
	clear(b.fresh)
	clear(b.lanes)
	*b = prepBatch{lanes: b.lanes[:0], waitFor: b.waitFor[:0], fresh: b.fresh[:0]}
	return out
}

// runItem runs it's chain on in and appends the converted result, then
// its dependents' (up to maxDependentLevels below the submitted item)
// (finish). A chain with a JavaScript step stops before it, and the
// value goes on through the item's lane (lanes.go), as does any value
// of an item whose lane holds values still on their way. A discarded
// value ends here: nothing stored, no state change, nothing for the
// dependents.
func (s *shard) runItem(b *prepBatch, it *catalog.Item, in preprocess.Input, v *history.Sample, depth int) {
	in.Type = it.ValueType
	text, chainErr := in.Text, in.Err
	if len(it.Preprocessing) > 0 {
		ip := s.prepOf(it)
		if ip.err != nil {
			chainErr = "invalid preprocessing: " + ip.err.Error()
		} else {
			in.Defer, in.JS, in.KeepNumber = ip.js, s.p.opts.JS, true
			o, err := preprocess.Run(ip.chain, in, &ip.state)
			switch {
			case err != nil:
				chainErr = err.Error()
			case o.Suspended:
				s.startScript(b, it, ip.chain, o, in, v, depth)
				return
			case o.Discarded:
				s.p.discarded.Inc()
				return
			case !it.HasDependents() && s.finishNumber(b, it, &o, v):
				return // a number stored as it is, without its text
			default:
				text, chainErr = o.String(), ""
			}
		}
	}
	if l := s.queued(it.ID); l != nil {
		s.deferDone(b, l, it, text, chainErr, in, v, depth)
		return
	}
	s.finish(b, it, text, chainErr, in, v, depth)
}

// finishNumber appends a chain's numeric result (the custom multiplier's,
// a change step's) as the value, without formatting and converting its
// text, and reports whether it did: only for an item without
// dependents (they take text), with no values of it in a lane (they go
// first, deferDone), and when the number is exactly what converting its
// text would store (preprocess.Output.Number). Otherwise finish does it
// from the text.
func (s *shard) finishNumber(b *prepBatch, it *catalog.Item, o *preprocess.Output, v *history.Sample) bool {
	sm := history.Sample{ItemID: it.ID, Clock: v.Clock, NS: v.NS}
	if !o.Number(it.ValueType, &sm) || s.queued(it.ID) != nil {
		return false
	}
	b.out = append(b.out, sm)
	s.p.opts.ItemStates.SetItemState(it.ID, itemstate.Item{}) // supported (again)
	return true
}

// finish converts the result of it's chain (text, or its failure,
// chainErr) and appends it to the batch, then runs its dependents on it.
// A failure of the steps or of the conversion makes the item not
// supported; a failure of the steps (or of the check, in.Err, that no
// step turned into a value) is also the dependents' input, as in Zabbix,
// while a value that only fails conversion still feeds them its text.
func (s *shard) finish(b *prepBatch, it *catalog.Item, text, chainErr string, in preprocess.Input, v *history.Sample, depth int) {
	failed := chainErr
	if failed == "" {
		sm := history.Sample{ItemID: it.ID, Clock: v.Clock, NS: v.NS}
		if it.ValueType == history.Log && v.ItemID == it.ID {
			sm.Log = v.Log
		}
		// Convert copies string values, so sm never pins text (which may
		// be a span of a large master document).
		if err := preprocess.Convert(it.ValueType, unsafe.Slice(unsafe.StringData(text), len(text)), &sm); err != nil {
			failed = err.Error()
		} else {
			b.out = append(b.out, sm)
			s.p.opts.ItemStates.SetItemState(it.ID, itemstate.Item{}) // supported (again)
		}
	}
	if failed != "" {
		// A copy: a step's message quotes its input, which may alias
		// the submitter's buffer (see Prepare).
		failed = strings.Clone(failed)
		s.notSupported(it, failed, v.Clock)
	}
	if !it.HasDependents() || depth >= maxDependentLevels {
		return
	}
	din := preprocess.Input{Time: in.Time}
	if chainErr != "" {
		din.Err = failed // the copy made above
	} else {
		// One parse of the result (a JSON document, typically) serves
		// every dependent's first step, through this level's cache.
		din.Text = text
		s.caches[depth].Reset(text)
		din.Cache = &s.caches[depth]
	}
	for _, d := range b.snap.Dependents(it.ID) {
		if d.Enabled {
			s.runItem(b, d, din, v, depth+1)
		}
	}
	if din.Cache != nil {
		din.Cache.Reset("") // do not pin the text until the next value
	}
}

func hostName(it *catalog.Item) string {
	if it.Host != nil {
		return it.Host.Host
	}
	return ""
}

// prune drops the memory of items that left the catalog or stopped
// having steps, and restored states waiting for such items. It runs when
// the catalog's version changes: a walk over the shard's items with
// steps, once per catalog change, not per value.
func (s *shard) prune(snap *catalog.Snapshot) {
	s.prep.each(func(id uint64, _ *itemPrep) bool {
		it := snap.Item(id)
		return it == nil || len(it.Preprocessing) == 0
	})
	// Compiled chains are shared by address; items whose chain changed
	// compile again and the old entries would only pin memory.
	clear(s.chains)
	for id := range s.restored {
		if it := snap.Item(id); it == nil || len(it.Preprocessing) == 0 {
			delete(s.restored, id)
		}
	}
}

// PrepareCopied readies a value copied from another server (`peregrine
// migrate`'s history.import) for Submit: the value was preprocessed where
// it was collected, so it is only converted to its item's type, never
// run through the item's steps again nor fed to its dependent items
// (which have their own copied history).
func PrepareCopied(it *catalog.Item, raw []byte, s *history.Sample) error {
	s.ItemID = it.ID
	return preprocess.Convert(it.ValueType, raw, s)
}
