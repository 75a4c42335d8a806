package fsutil

import (
	"os"
	"path/filepath"
)

// WriteFileAtomic replaces path by data: it writes data to path+".tmp"
// (created with perm, truncated if a crashed write left it), fsyncs and
// closes it, renames it over path and fsyncs path's directory. A crash at
// any point leaves the old file or the new one, never a part of either;
// when it returns nil the new file is durable.
//
// On an error before the rename the temporary file is removed and path
// is untouched. An error from the final directory fsync means the new
// file is in place but may not survive an OS crash: the caller should
// report it as a failed save.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if err := writeSyncClose(f, data); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// writeSyncClose writes data to f, fsyncs and closes it; f is closed
// whatever happens.
func writeSyncClose(f *os.File, data []byte) error {
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// SyncDir fsyncs the directory dir, making the entries created, renamed
// or removed in it durable (a file's own fsync does not cover its name).
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return err
	}
	return d.Close()
}
