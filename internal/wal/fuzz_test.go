package wal

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzReplay uses arbitrary bytes as a segment file, either as the last
// segment (where damage must be cut cleanly, except a wrong segment
// header) or followed by a valid segment (where damage must be reported).
// Replay must not panic; when it succeeds, a second replay of the cut
// file must return the same records and cut nothing.
//
//	go test -run '^$' -fuzz '^FuzzReplay$' -fuzztime 30s ./internal/wal/
func FuzzReplay(f *testing.F) {
	seg := func(recs ...string) []byte {
		b := segHeader()
		for _, r := range recs {
			h := frameHeader([]byte(r))
			b = append(append(b, h[:]...), r...)
		}
		return b
	}
	valid := seg("alpha", "", "beta-beta-beta")
	f.Add([]byte{}, false)
	f.Add(valid, false)
	f.Add(valid, true)
	f.Add(valid[:len(valid)-2], false)
	f.Add(valid[:len(valid)-2], true)
	f.Add(append(bytes.Clone(valid), make([]byte, 64)...), false)
	f.Add(valid[:5], false)
	f.Add(append(seg("x"), 0xff, 0xff, 0, 0, 1, 2, 3, 4), false)
	flipped := bytes.Clone(valid)
	flipped[20] ^= 4
	f.Add(flipped, false)

	f.Fuzz(func(t *testing.T, data []byte, middle bool) {
		fs := newMemFS()
		if err := fs.MkdirAll(testDir, 0o755); err != nil {
			t.Fatal(err)
		}
		fs.setFileBytes(segmentPath(testDir, 1), data)
		fs.maxRead = 1 + len(data)%13 // short reads at varying split points
		if middle {
			fs.setFileBytes(segmentPath(testDir, 2), seg("next"))
		}
		logs := &logCapture{}
		o := Options{Logger: slog.New(logs)}
		replay := func() ([][]byte, error) {
			w := openMem(t, fs, o)
			defer w.Close()
			var got [][]byte
			err := w.Replay(func(rec []byte) error {
				got = append(got, bytes.Clone(rec))
				return nil
			})
			return got, err
		}
		got, err := replay()
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Replay = %v; want nil or ErrCorrupt", err)
			}
			return
		}
		if middle {
			if !bytes.Equal(fs.fileBytes(segmentPath(testDir, 1)), data) {
				t.Fatal("Replay changed a segment that is not the last")
			}
			if len(got) == 0 || string(got[len(got)-1]) != "next" {
				t.Fatalf("records of the following segment missing: %q", got)
			}
			return
		}
		if cut := fs.fileBytes(segmentPath(testDir, 1)); !bytes.HasPrefix(data, cut) {
			t.Fatalf("Replay left %d bytes that are not a prefix of the segment", len(cut))
		}
		logs.take()
		again, err := replay()
		if err != nil {
			t.Fatalf("second Replay = %v", err)
		}
		if diff := cmp.Diff(got, again, recsEqual); diff != "" {
			t.Fatalf("second replay differs (-first +second):\n%s", diff)
		}
		if l := logs.take(); len(l) != 0 {
			t.Fatalf("second replay cut again: %v", l)
		}
	})
}
