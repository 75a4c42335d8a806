package wal

import (
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// memFS is an in-memory FS that models what survives a crash, in the
// spirit of Pebble's vfs.MemFS: every file remembers the bytes it had at
// its last Sync, and every directory the entries it had at its last
// SyncDir. CrashClone returns the filesystem a machine would find after
// losing power now. Directories themselves are assumed durable.
//
// Every operation first calls the inject hook, which may delay it (to
// make group commit observable) or fail it (error injection), and is
// counted.
type memFS struct {
	mu     sync.Mutex
	dirs   map[string]*memDir
	inject func(op fsOp, path string) error
	counts map[fsOp]int
	// maxRead, if positive, caps the bytes one Read returns, to exercise
	// readers against short reads.
	maxRead int
}

type fsOp string

const (
	opOpen     fsOp = "open"
	opWrite    fsOp = "write"
	opRead     fsOp = "read"
	opSync     fsOp = "sync"
	opTruncate fsOp = "truncate"
	opRemove   fsOp = "remove"
	opReadDir  fsOp = "readdir"
	opSyncDir  fsOp = "syncdir"
)

type memDir struct {
	files  map[string]*memNode // current entries
	synced map[string]*memNode // entries at the last SyncDir
}

type memNode struct {
	data   []byte
	synced []byte // contents at the last Sync; never shares data's array
	dirty  int    // lowest offset changed since the last Sync
}

func newMemFS() *memFS {
	return &memFS{dirs: map[string]*memDir{}, counts: map[fsOp]int{}}
}

// setInject installs hook (nil removes it).
func (m *memFS) setInject(hook func(op fsOp, path string) error) {
	m.mu.Lock()
	m.inject = hook
	m.mu.Unlock()
}

// count returns how many times op was called.
func (m *memFS) count(op fsOp) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.counts[op]
}

// begin counts op and runs the inject hook outside the lock.
func (m *memFS) begin(op fsOp, path string) error {
	m.mu.Lock()
	m.counts[op]++
	hook := m.inject
	m.mu.Unlock()
	if hook != nil {
		if err := hook(op, path); err != nil {
			return &fs.PathError{Op: string(op), Path: path, Err: err}
		}
	}
	return nil
}

func (m *memFS) dir(path string) (*memDir, string, error) {
	path = filepath.Clean(path)
	d := m.dirs[filepath.Dir(path)]
	if d == nil {
		return nil, "", &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	return d, filepath.Base(path), nil
}

func (m *memFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	if err := m.begin(opOpen, name); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	d, base, err := m.dir(name)
	if err != nil {
		return nil, err
	}
	n := d.files[base]
	switch {
	case n != nil && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrExist}
	case n == nil && flag&os.O_CREATE == 0:
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	case n == nil:
		n = &memNode{}
		d.files[base] = n
	}
	if flag&os.O_TRUNC != 0 {
		n.data = n.data[:0]
		n.dirty = 0
	}
	acc := flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR)
	return &memFile{fs: m, node: n, path: name, canRead: acc != os.O_WRONLY, canWrite: acc != os.O_RDONLY}, nil
}

func (m *memFS) Remove(name string) error {
	if err := m.begin(opRemove, name); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	d, base, err := m.dir(name)
	if err != nil {
		return err
	}
	if d.files[base] == nil {
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	}
	delete(d.files, base)
	return nil
}

func (m *memFS) ReadDir(dir string) ([]string, error) {
	if err := m.begin(opReadDir, dir); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.dirs[filepath.Clean(dir)]
	if d == nil {
		return nil, &fs.PathError{Op: "readdir", Path: dir, Err: fs.ErrNotExist}
	}
	var names []string
	for n := range d.files {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

func (m *memFS) MkdirAll(dir string, perm os.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		if m.dirs[p] == nil {
			m.dirs[p] = &memDir{files: map[string]*memNode{}, synced: map[string]*memNode{}}
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

func (m *memFS) SyncDir(dir string) error {
	if err := m.begin(opSyncDir, dir); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.dirs[filepath.Clean(dir)]
	if d == nil {
		return &fs.PathError{Op: "syncdir", Path: dir, Err: fs.ErrNotExist}
	}
	clear(d.synced)
	for k, v := range d.files {
		d.synced[k] = v
	}
	return nil
}

// crashTorn says what CrashClone keeps of bytes written but not synced.
type crashTorn int

const (
	// keepSynced keeps exactly the synced bytes.
	keepSynced crashTorn = iota
	// keepTorn keeps, for each file only appended to since its last sync,
	// a random prefix of the unsynced bytes, sometimes zeroed, sometimes
	// with a flipped byte, sometimes followed by zeros: what writeback
	// in progress at the moment of the crash can leave.
	keepTorn
)

// CrashClone returns the filesystem as it would be found after a crash
// now: the entries each directory had at its last SyncDir, each holding
// the bytes it had at its last Sync (plus, with keepTorn and r, a torn
// piece of what was written since).
func (m *memFS) CrashClone(torn crashTorn, r *rand.Rand) *memFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := newMemFS()
	for path, d := range m.dirs {
		nd := &memDir{files: map[string]*memNode{}, synced: map[string]*memNode{}}
		for name, n := range d.synced {
			data := slices.Clone(n.synced)
			if torn == keepTorn && n.dirty >= len(n.synced) && len(n.data) > len(n.synced) {
				data = append(data, tornPiece(r, n.data[len(n.synced):])...)
			}
			nn := &memNode{data: data, synced: slices.Clone(data), dirty: len(data)}
			nd.files[name] = nn
			nd.synced[name] = nn
		}
		c.dirs[path] = nd
	}
	return c
}

func tornPiece(r *rand.Rand, unsynced []byte) []byte {
	p := slices.Clone(unsynced[:r.IntN(len(unsynced)+1)])
	switch r.IntN(5) {
	case 0: // the size reached disk, the data did not
		clear(p)
	case 1: // one sector of the piece holds garbage
		if len(p) > 0 {
			p[r.IntN(len(p))] ^= byte(1 + r.IntN(255))
		}
	case 2: // preallocated or extended with zeros
		p = append(p, make([]byte, r.IntN(4096))...)
	}
	return p
}

// fileBytes returns the current contents of path (test inspection).
func (m *memFS) fileBytes(path string) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, base, err := m.dir(path)
	if err != nil || d.files[base] == nil {
		return nil
	}
	return slices.Clone(d.files[base].data)
}

// setFileBytes replaces path's contents, synced, creating it if needed.
func (m *memFS) setFileBytes(path string, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, base, err := m.dir(path)
	if err != nil {
		panic(err)
	}
	n := &memNode{data: slices.Clone(data), synced: slices.Clone(data), dirty: len(data)}
	d.files[base] = n
	d.synced[base] = n
}

type memFile struct {
	fs                *memFS
	node              *memNode
	path              string
	pos               int64
	canRead, canWrite bool
	closed            bool
}

func (f *memFile) Read(p []byte) (int, error) {
	if err := f.fs.begin(opRead, f.path); err != nil {
		return 0, err
	}
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed || !f.canRead {
		return 0, &fs.PathError{Op: "read", Path: f.path, Err: fs.ErrPermission}
	}
	if f.pos >= int64(len(f.node.data)) {
		return 0, io.EOF
	}
	if f.fs.maxRead > 0 && len(p) > f.fs.maxRead {
		p = p[:f.fs.maxRead]
	}
	n := copy(p, f.node.data[f.pos:])
	f.pos += int64(n)
	return n, nil
}

// shortWrite, returned by an inject hook for a write, makes the write
// store its first n bytes and then fail with err, as write(2) does when
// the disk fills in the middle of a buffer.
type shortWrite struct {
	n   int
	err error
}

func (s shortWrite) Error() string { return "short write: " + s.err.Error() }

func (f *memFile) Write(p []byte) (int, error) {
	if err := f.fs.begin(opWrite, f.path); err != nil {
		var sw shortWrite
		if !errors.As(err, &sw) {
			return 0, err
		}
		n, _ := f.write(p[:min(sw.n, len(p))])
		return n, &fs.PathError{Op: "write", Path: f.path, Err: sw.err}
	}
	return f.write(p)
}

func (f *memFile) write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed || !f.canWrite {
		return 0, &fs.PathError{Op: "write", Path: f.path, Err: fs.ErrPermission}
	}
	n := f.node
	end := f.pos + int64(len(p))
	if end > int64(len(n.data)) {
		n.data = append(n.data, make([]byte, end-int64(len(n.data)))...)
	}
	copy(n.data[f.pos:], p)
	n.dirty = min(n.dirty, int(f.pos))
	f.pos = end
	return len(p), nil
}

func (f *memFile) Sync() error {
	if err := f.fs.begin(opSync, f.path); err != nil {
		return err
	}
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return &fs.PathError{Op: "sync", Path: f.path, Err: fs.ErrClosed}
	}
	n := f.node
	keep := min(n.dirty, len(n.synced))
	n.synced = append(n.synced[:keep], n.data[keep:]...)
	n.dirty = len(n.data)
	return nil
}

func (f *memFile) Truncate(size int64) error {
	if err := f.fs.begin(opTruncate, f.path); err != nil {
		return err
	}
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed || !f.canWrite {
		return &fs.PathError{Op: "truncate", Path: f.path, Err: fs.ErrPermission}
	}
	n := f.node
	if size < int64(len(n.data)) {
		n.data = n.data[:size]
	} else {
		n.data = append(n.data, make([]byte, size-int64(len(n.data)))...)
	}
	n.dirty = min(n.dirty, int(size))
	return nil
}

func (f *memFile) Stat() (os.FileInfo, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	return memInfo{name: filepath.Base(f.path), size: int64(len(f.node.data))}, nil
}

func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return &fs.PathError{Op: "close", Path: f.path, Err: fs.ErrClosed}
	}
	f.closed = true
	return nil
}

type memInfo struct {
	name string
	size int64
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() os.FileMode  { return 0o644 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }
