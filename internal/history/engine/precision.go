package engine

import "github.com/peregrine-mon/peregrine/internal/history"

// Timestamp precision (history.Precision) is applied once, in Write,
// before the WAL record is encoded: the WAL, the head, blocks and every
// read then hold the same truncated timestamp, so a value reads back the
// same before and after a flush or a restart, and a truncated timestamp
// that meets an existing one replaces it by the ordinary last-write-wins
// rule.
//
// A precision change applies to values written after it. Values already
// stored keep the timestamps they were stored with: nothing is rewritten
// (a day being compacted is merged as stored), because a coarser rewrite
// would merge values that were distinct when they were acknowledged.

// noRelease is truncate's release when it did not copy.
func noRelease() {}

// truncate returns samples with each timestamp cut to its item's
// precision, and a function to call once the returned batch is no longer
// used. The caller's batch is never modified (the pipeline still reads
// it); it is copied into a pooled batch only when some value needs
// cutting, so the default (nanoseconds, no per-item settings) costs one
// branch per batch.
func (s *Store) truncate(samples []history.Sample) ([]history.Sample, func()) {
	if s.opts.Precision == history.PrecisionNS && s.opts.ItemPrecision == nil {
		return samples, noRelease
	}
	var out []history.Sample
	var bp *[]history.Sample
	for i := range samples {
		p := s.opts.Precision
		if s.opts.ItemPrecision != nil {
			if ip, ok := s.opts.ItemPrecision(samples[i].ItemID); ok {
				p = ip
			}
		}
		ns := p.TruncateNS(samples[i].NS)
		if ns == samples[i].NS {
			continue
		}
		if out == nil {
			bp, _ = s.truncs.Get().(*[]history.Sample)
			if bp == nil {
				bp = new([]history.Sample)
			}
			out = append((*bp)[:0], samples...)
		}
		out[i].NS = ns
	}
	if out == nil {
		return samples, noRelease
	}
	return out, func() {
		if cap(out) <= 1<<16 {
			clear(out) // drop references to strings and log metadata
			*bp = out[:0]
			s.truncs.Put(bp)
		}
	}
}
