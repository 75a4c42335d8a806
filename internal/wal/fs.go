package wal

import (
	"io"
	"os"
	"slices"

	"github.com/peregrine-mon/peregrine/internal/fsutil"
)

// FS is the filesystem seam of the WAL: every file and directory operation
// the WAL performs goes through it, so tests can substitute an in-memory
// filesystem that models crashes (keeping only what was fsynced) and
// injects errors. The WAL's durability argument rests on exactly these
// operations, which is why the seam has five methods rather than the
// usual two to four: each one is a distinct step in that argument.
type FS interface {
	// OpenFile opens name with os.OpenFile semantics. The WAL uses
	// os.O_RDONLY, os.O_RDWR and os.O_WRONLY|os.O_CREATE|os.O_EXCL.
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	// Remove deletes the file name.
	Remove(name string) error
	// ReadDir returns the names of the entries of dir, sorted.
	ReadDir(dir string) ([]string, error)
	// MkdirAll creates dir and any missing parents.
	MkdirAll(dir string, perm os.FileMode) error
	// SyncDir makes the directory entries of dir (files created, removed)
	// durable, as fsync on the directory does on Linux.
	SyncDir(dir string) error
}

// File is an open file. *os.File implements it.
type File interface {
	io.Reader
	io.Writer
	io.Closer
	// Sync makes everything written so far durable (fsync).
	Sync() error
	// Truncate changes the size of the file.
	Truncate(size int64) error
	// Stat returns the file's metadata; the WAL uses only Size.
	Stat() (os.FileInfo, error)
}

// OS returns the FS backed by the operating system.
func OS() FS { return osFS{} }

type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err // a nil *os.File must not become a non-nil File
	}
	return f, nil
}

func (osFS) Remove(name string) error { return os.Remove(name) }

func (osFS) ReadDir(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	slices.Sort(names)
	return names, nil
}

func (osFS) MkdirAll(dir string, perm os.FileMode) error { return os.MkdirAll(dir, perm) }

func (osFS) SyncDir(dir string) error { return fsutil.SyncDir(dir) }
