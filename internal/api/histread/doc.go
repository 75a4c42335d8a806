// Package histread is the read engine of history.get: it reads the rows
// of a checked request from a history store and writes them as the
// Zabbix API answers them, a JSON array of row objects whose every field
// is a string, or their number.
//
// Use: a Reader (New) per store holds what requests share; for each
// request, Reader.Plan decides from the Request alone how it is read,
// and Plan.Run reads until the answer is known to be sendable and
// returns the function that writes it:
//
//	run, err := reader.Plan(req).Run(ctx) // *TooManyRowsError, *TooManyBucketsError, *ReadError
//	...
//	err = run(w)                           // rows straight into the response buffer
//
// The two steps exist because a request over Options.MaxRows (api.max_rows)
// must fail with a clean error before the first byte of its answer goes
// out; once run has started, only a store error can stop it, and the
// answer is then cut.
//
// What it owns:
//
//   - the ways of reading (histread.go): the count (countOutput), a
//     stream of one batched read of all the items (history.ReadMany) or
//     of a merge by clock of per-item reads (a heap of pull iterators,
//     one pending row per item), preceded by a counting pass when the
//     limit does not bound the rows;
//   - the bounded prefetch (prefetch.go): a numeric read without a limit
//     is buffered as compact rows, so that the usual read needs no
//     counting pass; many items are read in up to min(GOMAXPROCS, 4)
//     parts at once, and a merge by clock (sortfield "clock", as Grafana
//     asks) orders the buffered rows by a two-level counting sort on
//     their time (merge_bucket.go), or by a heap of one cursor per item
//     when the rows are sparse over their seconds;
//   - the row encoder (encode.go), which formats numeric rows straight
//     into the response buffer;
//   - downsampling (downsample.go), Peregrine's "downsample" extension.
//
// What it does not own: the parameters and their errors (package api
// parses history.get's params into a Request and words this package's
// errors as Zabbix's), permissions (api narrows the items to those the
// caller may read before it plans), the meaning of "filter" and
// "search" (api compiles them into Request.Match), and the value
// formatting shared with other answers (package zjson). trend.get does
// not go through it: it reads whole trends, neither merged nor buffered.
//
// Hot path: per row there is no allocation, no reflection and no
// interface call beyond the store's callback (and Request.Match when
// there is one); the buffers are pooled and the row encoder's per-item
// text is laid out once per run of rows.
//
// Concurrency: a Reader is safe for concurrent use; requests share only
// the buffer budget (an atomic count) and the pool. A Plan belongs to one
// request and one goroutine, and Run's write function must be called once,
// from one goroutine. A prefetching read runs its parts on goroutines of
// its own, which end before the write function returns (or before Run
// returns an error).
package histread
