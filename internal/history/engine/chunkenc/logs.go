package chunkenc

import (
	"math"
	"slices"
)

// EncodeLogs appends a chunk of log values (message text plus metadata)
// with timestamps ts to dst and returns the extended slice. Each field is
// a column: the messages and the sources are string columns (each picks
// raw, dictionary or zstd on its own), and the metadata integers are
// int streams of zigzag deltas from the previous value (0 before the
// first), so that repeated severities and event IDs cost about a bit. It
// panics if the slices differ in length or hold more than MaxCount values.
//
// Value streams, in order:
//
//	byte mode + body   string column of messages
//	int stream (n)     zigzag deltas of LogMeta.Timestamp
//	byte mode + body   string column of LogMeta.Source
//	int stream (n)     zigzag deltas of LogMeta.Severity (as int64)
//	int stream (n)     zigzag deltas of LogMeta.EventID
func EncodeLogs(dst []byte, ts []int64, vals []string, meta []LogMeta) []byte {
	checkLens("EncodeLogs", len(ts), len(vals))
	checkLens("EncodeLogs meta", len(ts), len(meta))
	n := len(vals)
	dst = appendHeader(dst, EncLog, ts)
	if n == 0 {
		return dst
	}
	sc := getScratch()
	defer putScratch(sc)
	dst = appendTimestamps(dst, ts, sc)

	dst = appendColumn(dst, vals, sc)

	ints := make([]uint64, n)
	prev := int64(0)
	for i := range meta {
		ints[i] = zigzag(meta[i].Timestamp - prev)
		prev = meta[i].Timestamp
	}
	dst = appendInts(dst, ints)

	sources := make([]string, n)
	for i := range meta {
		sources[i] = meta[i].Source
	}
	dst = appendColumn(dst, sources, sc)

	prev = 0
	for i := range meta {
		s := int64(meta[i].Severity)
		ints[i] = zigzag(s - prev)
		prev = s
	}
	dst = appendInts(dst, ints)

	prev = 0
	for i := range meta {
		ints[i] = zigzag(meta[i].EventID - prev)
		prev = meta[i].EventID
	}
	return appendInts(dst, ints)
}

// appendColumn appends a string column with its mode byte.
func appendColumn(dst []byte, vals []string, sc *scratch) []byte {
	at := len(dst)
	dst = append(dst, 0)
	dst, mode := appendStringColumn(dst, vals, sc)
	dst[at] = mode
	return dst
}

// DecodeLogs decodes a log chunk, appending its timestamps, messages and
// metadata to ts, vals and meta. On error it returns the slices with their
// original lengths and an error wrapping ErrCorrupt.
func DecodeLogs(ts []int64, vals []string, meta []LogMeta, src []byte) ([]int64, []string, []LogMeta, error) {
	r := reader{b: src}
	info, err := r.header()
	if err != nil {
		return ts, vals, meta, err
	}
	if info.Encoding != EncLog {
		return ts, vals, meta, corruptAt("encoding", 0, "%v is not a log encoding", info.Encoding)
	}
	n := info.Count
	nts, nvals, nmeta := len(ts), len(vals), len(meta)
	ts = slices.Grow(ts, n)[:nts+n]
	vals = slices.Grow(vals, n)[:nvals+n]
	meta = slices.Grow(meta, n)[:nmeta+n]
	if err := decodeLogChunk(&r, &info, ts[nts:], vals[nvals:], meta[nmeta:]); err != nil {
		clear(vals[nvals:])
		clear(meta[nmeta:])
		return ts[:nts], vals[:nvals], meta[:nmeta], err
	}
	return ts, vals, meta, nil
}

func decodeLogChunk(r *reader, info *Info, ts []int64, vals []string, meta []LogMeta) error {
	n := len(vals)
	if err := decodeTimestamps(r, info, ts); err != nil {
		return err
	}
	if n == 0 {
		return r.end()
	}
	mode, err := r.byte("messages mode")
	if err != nil {
		return err
	}
	if err := decodeStringColumn(r, "messages", mode, vals, false); err != nil {
		return err
	}

	sc := getScratch()
	defer putScratch(sc)
	ints := grow(sc.u2, n)
	sc.u2 = ints
	if err := decodeInts(r, "log timestamps", ints); err != nil {
		return err
	}
	var acc int64
	for i, x := range ints {
		acc += unzigzag(x)
		meta[i] = LogMeta{Timestamp: acc}
	}

	if mode, err = r.byte("sources mode"); err != nil {
		return err
	}
	sources := make([]string, n)
	if err := decodeStringColumn(r, "sources", mode, sources, false); err != nil {
		return err
	}
	for i, s := range sources {
		meta[i].Source = s
	}

	off := r.off
	if err := decodeInts(r, "severities", ints); err != nil {
		return err
	}
	acc = 0
	for i, x := range ints {
		acc += unzigzag(x)
		if acc < math.MinInt32 || acc > math.MaxInt32 {
			return corruptAt("severities", off, "severity %d of value %d outside int32", acc, i)
		}
		meta[i].Severity = int32(acc)
	}

	if err := decodeInts(r, "event IDs", ints); err != nil {
		return err
	}
	acc = 0
	for i, x := range ints {
		acc += unzigzag(x)
		meta[i].EventID = acc
	}
	return r.end()
}
