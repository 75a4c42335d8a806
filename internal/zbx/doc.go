// Package zbx owns the Zabbix "ZBXD" framing used on the trapper (10051)
// and passive agent (10050) ports: the 13- or 21-byte header, its flags,
// zlib compression of the payload and the size limits that keep a hostile
// or broken peer from making us allocate.
//
// It does not own the payloads: decoding "sender data" JSON, agent data or
// passive check replies is the business of the packages that read frames
// (ingest, poll/agent). Item fields with a Zabbix syntax of their own
// have pure subpackages here, beside the protocol, so that the catalog,
// config and API can validate with the same code the stages run: item
// keys (itemkey), update intervals (delay) and SNMP OIDs (snmpoid).
//
// Wire format (see shared/spec/zabbix-compat.md §1): "ZBXD", one flags
// byte, then two little-endian unsigned sizes, datalen and reserved, of 4
// bytes each (8 bytes each when FlagLarge is set), then datalen bytes of
// payload. With FlagCompressed the payload is a zlib stream and reserved
// is its inflated size; without it reserved means nothing and is ignored
// (Zabbix agent 2 6.0 writes reserved = datalen there).
//
// Reading: a Reader decodes frames from a stream and validates every size
// against ReaderOptions.MaxSize before it reads or allocates. Its buffers
// grow with the bytes that actually arrive (or inflate), never with the
// size a peer merely announces, and they are reused from frame to frame,
// so the steady state does not allocate for uncompressed frames; nothing
// is allocated before a body's first bytes arrive. A
// compressed body is inflated as it arrives: only the inflated payload is
// buffered, never the compressed bytes as well. A Reader never reads past
// the end of the current frame: replacing it with a new Reader (or
// calling Reset) between frames loses no bytes.
//
// Memory: a ReaderOptions.Memory is told before every allocation (and may
// refuse it, which fails the read) and after every buffer the Reader
// drops; the zlib state counts as InflateStateBytes. A Memory that is
// also an ArrivalWatcher hears when each frame's body has been read
// from the connection (for a compressed body, its last compressed byte),
// after which the frame no longer waits for its peer. Trim drops buffers
// above a size between frames and Release drops everything, so a server
// can account for, and bound, what all its connections hold.
//
// Writing: AppendFrame encodes into a caller-owned buffer; WriteFrame is
// the convenience that also sets a write deadline.
//
// Errors wrap one of the sentinels ErrBadMagic, ErrBadFlags, ErrTooLarge,
// ErrTruncated and ErrCompression, with the numbers in the message. I/O
// errors from the underlying connection are wrapped too, and a deadline
// that expires still satisfies os.IsTimeout and
// errors.Is(err, os.ErrDeadlineExceeded).
//
// Concurrency: a Reader belongs to one goroutine (one connection) at a
// time. ParseHeader, AppendFrame and WriteFrame are safe for concurrent use;
// concurrent WriteFrame calls on the same writer are not serialised.
package zbx
