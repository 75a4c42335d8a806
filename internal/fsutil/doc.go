// Package fsutil holds the file-system steps that durable state files
// share: replacing a file atomically (WriteFileAtomic) and making a
// directory's entries durable (SyncDir); and SpaceGuard, which tells
// whether a file system has a minimum of free space (statfs, measured
// at most once a second), so that the history refuses values early and
// clearly rather than failing in the middle of a write.
//
// # What it owns
//
//   - The sequence write temporary file, fsync it, close it, rename it
//     over the target, fsync the directory: after a crash the target is
//     the old file or the new one, whole, never a part; once
//     WriteFileAtomic returns nil the new file survives a crash of the
//     operating system too.
//   - The name of the temporary file, path+".tmp", beside the target (a
//     rename is atomic only within one file system). Users that scan
//     their directories (the history engine removes "*.tmp" at open) rely
//     on that name.
//
// # What it does not own
//
// Creating the parent directory, choosing permissions, file formats and
// checksums, and logs appended in place (internal/wal has its own
// segments and file-system seam, whose real implementation calls
// SyncDir). Only a SpaceGuard keeps state: its last measurement.
//
// # Concurrency contract
//
// A SpaceGuard is safe for concurrent use. The functions are safe to
// call from any goroutine, but two concurrent
// WriteFileAtomic calls for the same path share one temporary file and
// must not happen: each user writes a given path from one goroutine at a
// time. Readers of the target never see a partial file.
//
// It sits in the foundation layer (docs/layout.md) and imports nothing
// from the module.
package fsutil
