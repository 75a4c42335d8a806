// Package record owns the payloads of write-ahead-log records: how a batch
// of history samples is laid out in the bytes the wal package frames,
// checksums and stores. The byte layout is specified in prose in
// docs/format/wal.md ("Record payloads").
//
// # What it owns
//
//   - The record type byte (the first byte of every payload), so that later
//     record types (series metadata, tombstones, checkpoints) can follow
//     without a format break. TypeSamples is the only type today.
//   - AppendSamples and DecodeSamples: a compact, self-delimiting encoding
//     of any mix of items and value types, with no sorting requirement.
//
// # What it does not own
//
// Framing, checksums, segments and durability belong to package wal: a
// payload that reaches DecodeSamples has already passed the WAL's CRC, so
// DecodeSamples guards against bugs, version skew and hostile files, not
// against torn writes. Validation of samples (value types, clock ranges)
// belongs to the caller: AppendSamples encodes what it is given and
// treats an invalid value type as a caller bug.
//
// # Concurrency contract
//
// The functions are pure: they keep no state and may be called from any
// number of goroutines at once. AppendSamples appends to a buffer the
// caller owns and returns it; DecodeSamples copies every string out of
// src, so src may be reused as soon as it returns.
package record
