// Package chunkenc owns the compressed encodings of history chunks: a
// chunk is one item's values over a time range, stored as one byte slice
// that starts with a small header (encoding, count, first and last
// timestamp) followed by a timestamp stream and a value stream. The byte
// layout is specified in docs/format/chunks.md; this package is its only
// implementation.
//
// What it does:
//
//   - EncodeFloats, EncodeUints, EncodeStrings and EncodeLogs append one
//     chunk to a caller-owned buffer and return it, choosing per chunk the
//     smallest of the encodings that fit the data: a constant, a decimal
//     mantissa stream (floats that are exact decimals such as 23.45), a
//     Gorilla XOR bitstream, a counter's change per second as integer
//     differences over the chunk's timestamps, raw bits, deltas or deltas of deltas for
//     unsigned values (divided by their common factor when they have one),
//     a dictionary or a zstd block for text. Integer streams inside are
//     bit-packed, varint, run-length, sparse (a dominant value plus
//     Rice-coded exceptions) or zstd, whichever is smallest; timestamps
//     of agents that stamp in milliseconds are split into whole seconds
//     and sub-second parts when that saves enough.
//   - DecodeFloats, DecodeUints, DecodeStrings and DecodeLogs append the
//     values of one chunk to caller-owned slices. Every decoded float is
//     bit-identical to the encoded one (including -0, NaN payloads and
//     ±Inf); every timestamp is exact to the nanosecond.
//   - Inspect reads only the header, for indexes and range pruning.
//   - DecodeTimes decodes the header and timestamps only, for counting
//     values in a range without decoding them.
//
// What it does not do: it does not know items, files, partitions or the
// order in which chunks are cut; the caller decides how many values a
// chunk holds (at most MaxCount; 120 to a few thousand is the intended
// range) and stores the returned bytes. It keeps no state between calls
// except pooled scratch buffers and zstd coders.
//
// Input from disk is untrusted: decoders never panic on corrupt bytes,
// every error they return wraps ErrCorrupt and names the field and byte
// offset, and decoded sizes are bounded by the chunk's value count (at
// most MaxCount) and by MaxZstdBytes, so that a corrupt chunk cannot make
// a decoder allocate more than a few tens of megabytes. Encoders panic
// (with a "BUG:" message) only when the caller breaks the contract:
// slices of different lengths or more than MaxCount values.
//
// Timestamps are int64 unix nanoseconds (history.Sample Clock*1e9+NS).
// They are meant to be strictly ascending within a chunk, and Info.MinT and
// Info.MaxT are only the minimum and maximum under that contract: in fact
// the header stores the first and the last timestamp, and any int64
// sequence round-trips exactly.
//
// Concurrency: all functions are safe for concurrent use; the slices
// passed in belong to the caller and are not retained. Decoded strings
// never alias the source bytes, so the chunk buffer may be reused at once.
package chunkenc
