package zbx_test

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// FuzzReadFrame decodes arbitrary bytes as a stream of frames, once from
// a whole buffer and once split into random pieces, and checks that:
// nothing panics; both readings agree; every decoded payload re-encodes
// with AppendFrame and decodes to the same payload.
//
//	go test -run '^$' -fuzz '^FuzzReadFrame$' -fuzztime 30s ./internal/zbx/
func FuzzReadFrame(f *testing.F) {
	fixtures := hexFixtures(f)
	names := make([]string, 0, len(fixtures))
	for n := range fixtures {
		names = append(names, n)
	}
	sort.Strings(names)
	var stream []byte // the small captures back to back: a persistent connection
	for i, n := range names {
		f.Add(fixtures[n], uint64(i))
		if len(fixtures[n]) < 100 {
			stream = append(stream, fixtures[n]...)
		}
	}
	f.Add(stream, uint64(1))
	f.Add(zbx.AppendFrame(zbx.AppendFrame(nil, []byte("agent.ping"), 0x03), []byte("x"), 0x05), uint64(2))
	f.Add(zbx.AppendFrame(nil, bytes.Repeat([]byte("ab"), 3000), 0x07), uint64(3))

	opts := zbx.ReaderOptions{MaxSize: 1 << 20, AllowLarge: true}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		whole, wholeErr := readAll(bytes.NewReader(data), opts)
		rng := rand.New(rand.NewPCG(seed, uint64(len(data))))
		split, splitErr := readAll(&splitReader{data: data, rng: rng}, opts)

		if len(whole) != len(split) {
			t.Fatalf("whole buffer gave %d frames (%v), split gave %d (%v)", len(whole), wholeErr, len(split), splitErr)
		}
		for i := range whole {
			if whole[i].flags != split[i].flags || !bytes.Equal(whole[i].payload, split[i].payload) {
				t.Fatalf("frame %d differs between whole and split reads", i)
			}
		}
		if errClass(wholeErr) != errClass(splitErr) {
			t.Fatalf("whole buffer ended with %v, split with %v", wholeErr, splitErr)
		}
		if errClass(wholeErr) == "other" {
			t.Fatalf("error wraps no sentinel: %v", wholeErr)
		}

		for i, fr := range whole {
			enc := zbx.AppendFrame(nil, fr.payload, fr.flags&zbx.FlagCompressed)
			flags, p, err := zbx.NewReader(bytes.NewReader(enc), opts).ReadFrame()
			if err != nil {
				t.Fatalf("frame %d: re-encoded frame does not decode: %v", i, err)
			}
			if flags&zbx.FlagCompressed != fr.flags&zbx.FlagCompressed || !bytes.Equal(p, fr.payload) {
				t.Fatalf("frame %d: re-encoded frame decodes to flags 0x%02x and %d bytes, want 0x%02x and %d bytes",
					i, flags, len(p), fr.flags, len(fr.payload))
			}
		}
	})
}

type decoded struct {
	flags   byte
	payload []byte
}

// readAll decodes frames until the first error, which it returns (io.EOF
// for a clean end).
func readAll(src io.Reader, opts zbx.ReaderOptions) ([]decoded, error) {
	r := zbx.NewReader(src, opts)
	var out []decoded
	for {
		flags, p, err := r.ReadFrame()
		if err != nil {
			return out, err
		}
		out = append(out, decoded{flags, bytes.Clone(p)})
	}
}

func errClass(err error) string {
	for _, s := range []error{io.EOF, zbx.ErrBadMagic, zbx.ErrBadFlags, zbx.ErrTooLarge, zbx.ErrTruncated, zbx.ErrCompression} {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	return "other"
}

// splitReader returns data in pieces of random length (0 included, which
// a Read may legally return), ending with io.EOF.
type splitReader struct {
	data []byte
	rng  *rand.Rand
}

func (s *splitReader) Read(p []byte) (int, error) {
	if len(s.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(s.data), s.rng.IntN(32))
	copy(p, s.data[:n])
	s.data = s.data[n:]
	return n, nil
}
