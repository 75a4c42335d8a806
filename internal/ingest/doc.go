// Package ingest owns Peregrine's Zabbix trapper listener: it accepts TCP
// connections, reads ZBXD frames (package zbx), decodes "sender data"
// requests, checks every value against the catalog snapshot and converts
// it to its item's value type (with package preprocess's rules, the same
// for every way in), hands the accepted values to the pipeline and
// answers with the reply the real Zabbix server gives once the pipeline
// has acknowledged them. Server.Push applies the same rules to the API's
// history.push values (preprocess.RawValue); the API reaches it through
// its own Pusher interface and does not import this package.
//
// It does not own the catalog, the pipeline, storage or the acceptance
// and conversion rules; it reaches the first three through the Catalog
// and Submitter interfaces that main wires in.
//
// Bounds: at most MaxConnections connections are served at once (the rest
// wait in the kernel's accept queue); frames larger than MaxFrameSize are
// refused; every read and write has a deadline, so slow or half-open
// clients are disconnected (reason timeout) without holding anyone else
// up. Bad input is answered or dropped, counted by reason, and logged at
// most once per window per reason.
//
// Memory: everything a request makes grows with what it holds, and all of
// it counts against MaxBufferedBytes: frame buffers, inflated payloads
// (a compressed body is inflated as it arrives and never held whole),
// zlib state, decoded rows, samples and copies of string values. JSON
// strings are unescaped in place, so there is no scratch buffer beside
// the payload. Memory is taken as it is allocated, never for the size a
// header announces: a client that announces a frame and stalls holds
// nothing, and one 64 KiB quantum once it has sent more than 512 bytes. One connection holds at most
// 7/8 of the budget: a frame that needs more (a frame close to
// MaxBufferedBytes, or one of very many tiny values) is refused
// (memory_share); keep MaxBufferedBytes at two to four times
// MaxFrameSize. Small frames pass big ones; big ones are served oldest
// first; a request that finds no room waits until its frame's deadline,
// and when every byte is held by frames waiting for more, the youngest is
// refused (memory_busy). See byteBudget for the rules. Released buffers
// count until the garbage collector frees them, and the trapper runs a
// collection itself when they stand in the way, so the heap does not
// reach twice the budget between the runtime's own collections.
//
// The bound: the process's peak RSS stays within MaxBufferedBytes plus
// 48 MiB (Go runtime, code, catalog, allocator slack), plus about 8 KiB
// per open connection for its goroutine and socket state, which no
// budget counts (6.8 KB each, measured with 2,000 connections waiting in
// a header; 32 MiB at the default 4,096 connections).
// TestIntegrationInflateMemory measures it:
// with a 64 MiB budget, 48 concurrent compressed frames announcing 64 MiB
// of JSON and then 48 of 4 MiB peak at about 90 MiB (887 MiB before this
// accounting).
//
// Concurrency: one goroutine per connection; all shared state is atomic
// counters, the catalog's immutable snapshot and the pipeline.
package ingest
