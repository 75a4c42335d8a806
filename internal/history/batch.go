package history

import "context"

// BatchReader is a Reader that serves the reads of many items as one
// call. A dashboard asks for a short range of hundreds or thousands of
// items at once; one Read per item pays, per item, for taking a view of
// the store (locks, file references) and for fresh decode buffers, which
// for a minute of data costs more than the data. Stores find what the
// items share once.
type BatchReader interface {
	// ReadMany reads each of items in turn, in the given order, with q's
	// range, order and limit (q.ItemID is ignored; Limit applies to each
	// item): exactly the samples, in exactly the order, that one Read per
	// item would give. fn returning false ends the whole read. The
	// concurrency promise of Read holds for each item. Duplicates in
	// items are read twice.
	ReadMany(ctx context.Context, items []uint64, q Query, fn func(*Sample) bool) error
}

// ReadMany reads items with r's own BatchReader when it has one and with
// one Read per item otherwise, so every store supports it.
func ReadMany(ctx context.Context, r Reader, items []uint64, q Query, fn func(*Sample) bool) error {
	if b, ok := r.(BatchReader); ok {
		return b.ReadMany(ctx, items, q, fn)
	}
	return ReadEach(ctx, r, items, q, fn)
}

// ReadEach is the generic ReadMany: one Read per item.
func ReadEach(ctx context.Context, r Reader, items []uint64, q Query, fn func(*Sample) bool) error {
	stopped := false
	wrapped := func(v *Sample) bool {
		if !fn(v) {
			stopped = true
			return false
		}
		return true
	}
	for _, id := range items {
		q.ItemID = id
		if err := r.Read(ctx, q, wrapped); err != nil || stopped {
			return err
		}
	}
	return nil
}

// Counter is a store that counts what ReadMany would give without
// building the samples: history.get counts the rows of a request against
// api.max_rows before it sends any, and a store that can count from its
// index and timestamps skips decoding the values for that pass.
type Counter interface {
	// CountMany returns the number of samples ReadMany(items, q) would
	// pass to its callback. When max > 0 it MAY stop counting once the
	// count exceeds max, returning some number above max.
	CountMany(ctx context.Context, items []uint64, q Query, max int) (int, error)
}

// CountMany counts with r's own Counter when it has one and by counting a
// ReadMany otherwise.
func CountMany(ctx context.Context, r Reader, items []uint64, q Query, max int) (int, error) {
	if c, ok := r.(Counter); ok {
		return c.CountMany(ctx, items, q, max)
	}
	n := 0
	err := ReadMany(ctx, r, items, q, func(*Sample) bool {
		n++
		return max <= 0 || n <= max
	})
	return n, err
}

// NewestReader is a Store that finds the newest values of many items in
// a few requests. The pipeline restores every item's last and previous
// value at start; a store whose reads are network round trips (ClickHouse)
// would otherwise pay one or more requests per item, which for 100k items
// is minutes before the server listens.
type NewestReader interface {
	// ReadNewest calls fn once for each distinct item of items that has
	// values, with its newest n values, newest first: the samples a Read
	// with Desc and Limit n over all time gives. Items come in any order;
	// fn runs on the caller's goroutine, MUST NOT keep the slice, and
	// ends the read by returning false.
	ReadNewest(ctx context.Context, items []uint64, n int, fn func(newestFirst []Sample) bool) error
}
