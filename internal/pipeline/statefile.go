package pipeline

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"os"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/fsutil"
	"github.com/peregrine-mon/peregrine/internal/preprocess"
)

// The preprocessing state file (docs/format/preprocess-state.md): the
// magic, then one record per item, then a CRC-32C of everything before
// it. A record is the item ID (uvarint), the hash of the chain the
// state belongs to (8 bytes, little endian), and the length (uvarint)
// and bytes of preprocess.State's encoding.
var stateMagic = []byte("PRGNPPS1")

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// savedState is one item's state read from the file, waiting in its
// shard for the item's next value (see prepOf).
type savedState struct {
	hash  uint64
	state preprocess.State
}

// chainHash identifies a chain's configuration, so that a state saved
// for other steps (changed while the server was down) is not applied.
func chainHash(steps []catalog.PreprocStep) uint64 {
	h := fnv.New64a()
	for _, s := range steps {
		h.Write([]byte(strconv.Itoa(s.Type)))
		h.Write([]byte{0})
		h.Write([]byte(s.Params))
		h.Write([]byte{0})
		h.Write([]byte(strconv.Itoa(s.ErrorHandler)))
		h.Write([]byte{0})
		h.Write([]byte(s.ErrorHandlerParams))
		h.Write([]byte{1})
	}
	return h.Sum64()
}

// StateStore keeps the preprocessing state, replaced whole at each
// save: a file (Options.StatePath) or a pglog.Blob in PostgreSQL.
type StateStore interface {
	// Load returns what was saved, nil if nothing was.
	Load() ([]byte, error)
	// Save replaces it, atomically.
	Save(b []byte) error
	// String names it in logs.
	String() string
}

// StateTable and StateName are where the preprocessing state lives in
// PostgreSQL (state.store: postgres): the row StateName of the
// pglog.Blob table StateTable. The server's wiring and the migration
// from an embedded data directory (package hamigrate) both use them.
const (
	StateTable = "preprocess_state"
	StateName  = "state"
)

// fileState is the embedded StateStore: a new file is written, synced
// and renamed over the old one.
type fileState string

func (f fileState) Load() ([]byte, error) {
	b, err := os.ReadFile(string(f))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

func (f fileState) Save(b []byte) error { return fsutil.WriteFileAtomic(string(f), b, 0o600) }
func (f fileState) String() string      { return string(f) }

// SaveState writes every item's preprocessing state (what the change
// and discard steps remember) to Options.StateStore (by default the
// file Options.StatePath), atomically. It does nothing without one. Run calls it every StateInterval and once more
// after the shards stopped; it is safe to call at any time, taking each
// shard's preprocessing lock in turn (a shard waits for it at most once
// per batch).
func (p *Pipeline) SaveState() error {
	st := p.opts.StateStore
	if st == nil {
		return nil
	}
	p.saveMu.Lock()
	defer p.saveMu.Unlock()
	b := append([]byte(nil), stateMagic...)
	items := 0
	for _, s := range p.shards {
		s.prepMu.Lock()
		var err error
		s.prep.each(func(id uint64, ip *itemPrep) bool {
			if ip.err != nil || err != nil {
				return false
			}
			if b, err = appendRecord(b, id, ip.hash, &ip.state); err == nil {
				items++
			}
			return false
		})
		// States restored at start whose items have had no value since
		// are kept for their next value.
		for id, st := range s.restored {
			if err != nil {
				break
			}
			if b, err = appendRecord(b, id, st.hash, &st.state); err == nil {
				items++
			}
		}
		s.prepMu.Unlock()
		if err != nil {
			return fmt.Errorf("pipeline: cannot encode the preprocessing state: %w", err)
		}
	}
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
	if err := st.Save(b); err != nil {
		return fmt.Errorf("pipeline: cannot save the preprocessing state to %s: %w", st, err)
	}
	p.opts.Logger.Debug("preprocessing state saved", "path", st.String(), "items", items, "bytes", len(b))
	return nil
}

func appendRecord(b []byte, id, hash uint64, st *preprocess.State) ([]byte, error) {
	b = binary.AppendUvarint(b, id)
	b = binary.LittleEndian.AppendUint64(b, hash)
	enc, err := st.AppendBinary(nil)
	if err != nil {
		return b, err
	}
	b = binary.AppendUvarint(b, uint64(len(enc)))
	return append(b, enc...), nil
}

// errStateFile marks a state file that cannot be read back.
var errStateFile = errors.New("damaged preprocessing state file")

// loadState reads Options.StateStore into the shards' restored states,
// each in the shard of its item's root. A missing file is no state; a
// damaged one is an error (the caller logs it and starts without
// state: the change steps then discard each item's first value, as
// after Zabbix's restarts).
func (p *Pipeline) loadState() (int, error) {
	b, err := p.opts.StateStore.Load()
	if err != nil {
		return 0, err
	}
	if b == nil {
		return 0, nil
	}
	if len(b) < len(stateMagic)+4 || !bytes.Equal(b[:len(stateMagic)], stateMagic) {
		return 0, errStateFile
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, crcTable) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return 0, fmt.Errorf("%w: checksum mismatch", errStateFile)
	}
	var snap *catalog.Snapshot
	if p.opts.Catalog != nil {
		snap = p.opts.Catalog()
	}
	rest := body[len(stateMagic):]
	n := 0
	for len(rest) > 0 {
		id, k := binary.Uvarint(rest)
		if k <= 0 || len(rest)-k < 8 {
			return n, errStateFile
		}
		rest = rest[k:]
		hash := binary.LittleEndian.Uint64(rest)
		rest = rest[8:]
		l, k := binary.Uvarint(rest)
		if k <= 0 || l > uint64(len(rest)-k) {
			return n, errStateFile
		}
		var st savedState
		st.hash = hash
		if err := st.state.UnmarshalBinary(rest[k : k+int(l)]); err != nil {
			return n, fmt.Errorf("%w: item %d: %v", errStateFile, id, err)
		}
		rest = rest[k+int(l):]
		if snap != nil && snap.Item(id) == nil {
			continue // deleted while the server was down
		}
		s := p.shards[p.shardFor(id)]
		if s.restored == nil {
			s.restored = map[uint64]savedState{}
		}
		s.restored[id] = st
		n++
	}
	return n, nil
}
