package chunkenc

import (
	"encoding/hex"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The chunks of the worked examples in docs/format/chunks.md. Decoding
// them pins the format: a change that breaks this test breaks chunks
// already on disk. Encoding them pins the encoder's choices; when those
// change on purpose, update the examples here and in the document.
var goldenBase = int64(1_700_000_000) * 1e9

var goldenTS = []int64{goldenBase, goldenBase + 60e9, goldenBase + 120e9, goldenBase + 180e9}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGoldenFloats(t *testing.T) {
	f := func(name, chunk string, ts []int64, vals []float64) {
		t.Run(name, func(t *testing.T) {
			b := unhex(t, chunk)
			gotTS, gotV, err := DecodeFloats(nil, nil, b)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ts, gotTS); diff != "" {
				t.Errorf("timestamps (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(floatBits(vals), floatBits(gotV)); diff != "" {
				t.Errorf("value bits (-want +got):\n%s", diff)
			}
			if enc := EncodeFloats(nil, ts, vals); string(enc) != string(b) {
				t.Errorf("encoder output changed:\n got % x\nwant % x", enc, b)
			}
		})
	}
	f("decimal", "04 04 00 00 2a 36 fe 9c 97 17 80 90 d8 c6 9e 05 0a 06 01 02 01 00 00 03 02 d2 24 04 02 05 0a",
		goldenTS, []float64{23.45, 23.47, 23.46, 23.5})
	f("const", "01 04 00 00 2a 36 fe 9c 97 17 80 90 d8 c6 9e 05 0a 06 01 02 01 00 00 00 00 00 00 00 00 f0 3f",
		goldenTS, []float64{1, 1, 1, 1})
	f("xor", "03 03 00 00 2a 36 fe 9c 97 17 80 e0 ba 84 bf 03 0a 06 01 02 02 00 3f d5 55 55 55 55 55 55 ca 07 c0 fe ff 95 55 55 55 55 55 54",
		goldenTS[:3], []float64{1.0 / 3, 2.0 / 3, math.Copysign(0, -1)})
}

func TestGoldenUints(t *testing.T) {
	f := func(name, chunk string, ts []int64, vals []uint64) {
		t.Run(name, func(t *testing.T) {
			b := unhex(t, chunk)
			gotTS, gotV, err := DecodeUints(nil, nil, b)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ts, gotTS); diff != "" {
				t.Errorf("timestamps (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(vals, gotV); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
			if enc := EncodeUints(nil, ts, vals); string(enc) != string(b) {
				t.Errorf("encoder output changed:\n got % x\nwant % x", enc, b)
			}
		})
	}
	f("dod", "13 04 00 00 2a 36 fe 9c 97 17 80 90 d8 c6 9e 05 0a 06 01 02 01 00 00 e8 07 78 02 00 0a",
		goldenTS, []uint64{1000, 1060, 1120, 1185})
	f("const jitter", "11 04 d2 04 2a 36 fe 9c 97 17 fa 8e d8 c6 9e 05 00 01 01 aa dc ba 84 bf 03 02 c0 0b 89 0e 05",
		[]int64{goldenBase + 1234, goldenBase + 60e9 + 999, goldenBase + 120e9 + 1500, goldenBase + 180e9 + 1100},
		[]uint64{5, 5, 5, 5})
}

func TestGoldenStrings(t *testing.T) {
	b := unhex(t, "22 04 00 00 2a 36 fe 9c 97 17 80 90 d8 c6 9e 05 0a 06 01 02 01 00 00 02 02 02 04 75 70 64 6f 77 6e 00 01 01 00 20")
	vals := []string{"up", "up", "down", "up"}
	gotTS, gotV, err := DecodeStrings(nil, nil, b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(goldenTS, gotTS); diff != "" {
		t.Errorf("timestamps (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(vals, gotV); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	if enc := EncodeStrings(nil, goldenTS, vals); string(enc) != string(b) {
		t.Errorf("encoder output changed:\n got % x\nwant % x", enc, b)
	}
}
