package zbx

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Flag bits, header sizes and the default size limit.
const (
	// FlagProtocol must be set in every frame.
	FlagProtocol byte = 0x01
	// FlagCompressed marks a zlib payload; Reserved is its inflated size.
	FlagCompressed byte = 0x02
	// FlagLarge widens both size fields to 8 bytes.
	FlagLarge byte = 0x04

	// HeaderLen is the length of a normal header.
	HeaderLen = 13
	// LargeHeaderLen is the length of a header with FlagLarge set.
	LargeHeaderLen = 21

	// DefaultMaxSize is Zabbix's limit for normal frames (1 GiB), used
	// when ReaderOptions.MaxSize is 0.
	DefaultMaxSize = 1 << 30
)

// magic is the first 4 bytes of every frame.
const magic = "ZBXD"

// largeThreshold is the smallest size that needs FlagLarge: Zabbix sets
// it when a size is at least 2^32-1.
const largeThreshold = 1<<32 - 1

// Sentinel errors. Every error returned by this package for bad input
// wraps exactly one of them.
var (
	// ErrBadMagic: the first 4 bytes are not "ZBXD" (for example an
	// unframed legacy request or an HTTP client on the wrong port).
	ErrBadMagic = errors.New("zbx: missing ZBXD header")
	// ErrBadFlags: FlagProtocol is missing, an unknown bit is set, or
	// FlagLarge is set where large frames are not allowed.
	ErrBadFlags = errors.New("zbx: unsupported header flags")
	// ErrTooLarge: datalen, or reserved of a compressed frame, is beyond
	// the configured maximum.
	ErrTooLarge = errors.New("zbx: frame too large")
	// ErrTruncated: the stream ended after the first byte of a frame but
	// before its header or body was complete.
	ErrTruncated = errors.New("zbx: frame truncated")
	// ErrCompression: the payload is not a valid zlib stream, or it does
	// not inflate to exactly reserved bytes.
	ErrCompression = errors.New("zbx: bad compressed payload")
)

// Header is a decoded frame header.
type Header struct {
	// Flags is the raw flags byte.
	Flags byte
	// DataLen is the number of payload bytes on the wire (compressed
	// size with FlagCompressed).
	DataLen uint64
	// Reserved is the inflated size with FlagCompressed. Without it the
	// value is kept as received but means nothing: C programs write 0,
	// agent 2 6.0 writes DataLen.
	Reserved uint64
}

// Len returns the length of the header on the wire.
func (h Header) Len() int {
	if h.Flags&FlagLarge != 0 {
		return LargeHeaderLen
	}
	return HeaderLen
}

// Compressed reports whether the payload is a zlib stream.
func (h Header) Compressed() bool { return h.Flags&FlagCompressed != 0 }

// ParseHeader decodes a header from the start of b. b must hold at least
// HeaderLen bytes, or LargeHeaderLen bytes when FlagLarge is set. It
// validates the magic and the flags (allowLarge controls FlagLarge) and
// returns the header and its length. It does not check sizes against any
// limit; the Reader does that.
func ParseHeader(b []byte, allowLarge bool) (Header, int, error) {
	if err := checkMagic(b); err != nil {
		return Header{}, 0, err
	}
	if len(b) < HeaderLen {
		return Header{}, 0, fmt.Errorf("frame header has %d bytes, need %d: %w", len(b), HeaderLen, ErrTruncated)
	}
	flags := b[4]
	if err := checkFlags(flags, allowLarge); err != nil {
		return Header{}, 0, err
	}
	if flags&FlagLarge == 0 {
		return Header{
			Flags:    flags,
			DataLen:  uint64(binary.LittleEndian.Uint32(b[5:9])),
			Reserved: uint64(binary.LittleEndian.Uint32(b[9:13])),
		}, HeaderLen, nil
	}
	if len(b) < LargeHeaderLen {
		return Header{}, 0, fmt.Errorf("large frame header has %d bytes, need %d: %w", len(b), LargeHeaderLen, ErrTruncated)
	}
	return Header{
		Flags:    flags,
		DataLen:  binary.LittleEndian.Uint64(b[5:13]),
		Reserved: binary.LittleEndian.Uint64(b[13:21]),
	}, LargeHeaderLen, nil
}

// checkMagic checks as much of the magic as b holds, so that a reader can
// reject an unframed request as soon as its first bytes arrive instead of
// waiting for a full header that may never come.
func checkMagic(b []byte) error {
	n := min(len(b), len(magic))
	if string(b[:n]) != magic[:n] {
		return fmt.Errorf("frame starts with %q, want %q: %w", b[:n], magic, ErrBadMagic)
	}
	return nil
}

func checkFlags(flags byte, allowLarge bool) error {
	allowed := FlagProtocol | FlagCompressed
	if allowLarge {
		allowed |= FlagLarge
	}
	switch {
	case flags&FlagProtocol == 0:
		return fmt.Errorf("frame flags 0x%02x lack the protocol bit 0x01: %w", flags, ErrBadFlags)
	case flags&FlagLarge != 0 && !allowLarge:
		return fmt.Errorf("frame flags 0x%02x: large frames (0x04) are not accepted here: %w", flags, ErrBadFlags)
	case flags&^allowed != 0:
		return fmt.Errorf("frame flags 0x%02x have unknown bits 0x%02x: %w", flags, flags&^allowed, ErrBadFlags)
	}
	return nil
}

// putHeader writes a header for h into b, which must have room for
// h.Len() bytes.
func putHeader(b []byte, h Header) {
	copy(b, magic)
	b[4] = h.Flags
	if h.Flags&FlagLarge != 0 {
		binary.LittleEndian.PutUint64(b[5:13], h.DataLen)
		binary.LittleEndian.PutUint64(b[13:21], h.Reserved)
		return
	}
	binary.LittleEndian.PutUint32(b[5:9], uint32(h.DataLen))
	binary.LittleEndian.PutUint32(b[9:13], uint32(h.Reserved))
}
