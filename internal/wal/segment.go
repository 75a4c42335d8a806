package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// On-disk layout; docs/format/wal.md is the specification and these
// constants must agree with it.
const (
	// segHeaderSize is the size of the header at the start of every
	// segment: 4 bytes of magic and a 4-byte little-endian version.
	segHeaderSize = 8
	segVersion    = 1
	// recHeaderSize is the size of a record frame's header: 4-byte
	// little-endian payload length, then 4-byte little-endian CRC-32C over
	// the length bytes and the payload.
	recHeaderSize = 8
	// segSuffix ends every segment file name; the rest is the segment
	// index in decimal, zero-padded to segIndexWidth digits.
	segSuffix     = ".wal"
	segIndexWidth = 8
	// firstSegment is the index of the first segment of a new WAL.
	firstSegment = 1
)

// MaxRecordSize is the largest payload Append accepts. Records of up to
// this size may exceed Options.SegmentSize: such a record is written whole
// into a segment of its own.
const MaxRecordSize = 1 << 30

var segMagic = [4]byte{'P', 'W', 'A', 'L'}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// segHeader returns the bytes that open every segment.
func segHeader() []byte {
	h := make([]byte, segHeaderSize)
	copy(h, segMagic[:])
	binary.LittleEndian.PutUint32(h[4:], segVersion)
	return h
}

// frameHeader returns the 8-byte frame header of payload rec.
func frameHeader(rec []byte) [recHeaderSize]byte {
	var h [recHeaderSize]byte
	binary.LittleEndian.PutUint32(h[0:4], uint32(len(rec)))
	crc := crc32.Update(0, castagnoli, h[0:4])
	crc = crc32.Update(crc, castagnoli, rec)
	binary.LittleEndian.PutUint32(h[4:8], crc)
	return h
}

// segmentName returns the file name of segment idx.
func segmentName(idx int) string {
	s := strconv.Itoa(idx)
	if len(s) < segIndexWidth {
		s = strings.Repeat("0", segIndexWidth-len(s)) + s
	}
	return s + segSuffix
}

// parseSegmentName returns the index of a segment file name, or false for
// any other name (which the WAL ignores).
func parseSegmentName(name string) (int, bool) {
	digits, ok := strings.CutSuffix(name, segSuffix)
	if !ok || len(digits) < segIndexWidth {
		return 0, false
	}
	for _, c := range []byte(digits) {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	idx, err := strconv.Atoi(digits)
	if err != nil || segmentName(idx) != name {
		return 0, false
	}
	return idx, true
}

// listSegments returns the indexes of the segment files in dir, ascending.
func listSegments(fs FS, dir string) ([]int, error) {
	names, err := fs.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("wal: cannot list %s: %w", dir, err)
	}
	var idx []int
	for _, n := range names {
		if i, ok := parseSegmentName(n); ok {
			idx = append(idx, i)
		}
	}
	// Names past segIndexWidth digits sort before shorter ones by name;
	// order by number.
	slices.Sort(idx)
	return idx, nil
}

func segmentPath(dir string, idx int) string { return filepath.Join(dir, segmentName(idx)) }

// ErrCorrupt marks damaged WAL data that replay cannot skip silently:
// damage in a segment that is not the last one (a torn write can only hit
// the last), an unknown segment header, or a missing segment. Errors
// wrapping it are *CorruptionError values naming the file and offset.
var ErrCorrupt = errors.New("wal: corrupt")

// CorruptionError describes damage found by Replay. It wraps ErrCorrupt.
type CorruptionError struct {
	Segment string // path of the segment file
	Offset  int64  // byte offset of the first damaged frame or header
	Reason  string
}

func (e *CorruptionError) Error() string {
	return fmt.Sprintf("wal: segment %s is corrupt at offset %d: %s (not a torn tail: it is not the last segment or the damage is not a crash artefact; restore the file, or move it and every later segment aside to accept losing their records)",
		e.Segment, e.Offset, e.Reason)
}

// Unwrap makes errors.Is(err, ErrCorrupt) hold.
func (e *CorruptionError) Unwrap() error { return ErrCorrupt }
