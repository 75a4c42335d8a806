package zbx_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// Compare runs with benchstat:
//
//	go test -run '^$' -bench 'ReadFrame|AppendFrame' -benchmem -count 6 ./internal/zbx/ | tee new.txt
//	benchstat old.txt new.txt
//
// MB/s counts payload (inflated) bytes, so zlib=on and zlib=off compare
// as the same JSON delivered; bytes/value counts wire bytes.

// senderData builds a "sender data" request with n values, shaped like
// zabbix_sender's (about 57 bytes per value, so 250 values, one
// zabbix_sender batch, are about 14 KB). Fixed seed.
func senderData(n int) []byte {
	rng := rand.New(rand.NewPCG(42, uint64(n)))
	b := []byte(`{"request":"sender data","data":[`)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"host":"peregrine-test","key":"trap.k%03d","value":"%.1f"}`, rng.IntN(1000), rng.Float64()*100)
	}
	return append(b, "]}"...)
}

type benchCase struct {
	name    string
	values  int
	flags   byte
	payload []byte
}

func benchCases() []benchCase {
	var cases []benchCase
	for _, values := range []int{250, 10000} {
		p := senderData(values)
		for _, z := range []string{"off", "on"} {
			flags := zbx.FlagProtocol
			if z == "on" {
				flags |= zbx.FlagCompressed
			}
			cases = append(cases, benchCase{fmt.Sprintf("size=%dvalues/zlib=%s", values, z), values, flags, p})
		}
	}
	return cases
}

// loopReader serves the same bytes over and over, as a connection
// carrying one frame after another would.
type loopReader struct {
	data []byte
	off  int
}

func (l *loopReader) Read(p []byte) (int, error) {
	n := copy(p, l.data[l.off:])
	l.off = (l.off + n) % len(l.data)
	return n, nil
}

func BenchmarkReadFrame(b *testing.B) {
	for _, bc := range benchCases() {
		frame := zbx.AppendFrame(nil, bc.payload, bc.flags)
		b.Run(bc.name, func(b *testing.B) {
			r := zbx.NewReader(&loopReader{data: frame}, zbx.ReaderOptions{})
			if _, _, err := r.ReadFrame(); err != nil { // warm up: grow the buffers
				b.Fatal(err)
			}
			b.SetBytes(int64(len(bc.payload)))
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				_, p, err := r.ReadFrame()
				if err != nil || len(p) != len(bc.payload) {
					b.Fatalf("ReadFrame: %d bytes, %v", len(p), err)
				}
				n++
			}
			b.ReportMetric(float64(n*bc.values)/b.Elapsed().Seconds(), "values/s")
			b.ReportMetric(float64(len(frame))/float64(bc.values), "bytes/value")
		})
	}
}

func BenchmarkAppendFrame(b *testing.B) {
	for _, bc := range benchCases() {
		b.Run(bc.name, func(b *testing.B) {
			buf := zbx.AppendFrame(nil, bc.payload, bc.flags) // warm up
			b.SetBytes(int64(len(bc.payload)))
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				buf = zbx.AppendFrame(buf[:0], bc.payload, bc.flags)
				n++
			}
			b.ReportMetric(float64(n*bc.values)/b.Elapsed().Seconds(), "values/s")
			b.ReportMetric(float64(len(buf))/float64(bc.values), "bytes/value")
		})
	}
}

// TestReadFrameDoesNotAllocate guards the steady-state promise the
// benchmark measures: uncompressed frames cost no allocation once the
// buffer has grown.
func TestReadFrameDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, bc := range benchCases() {
		if bc.flags&zbx.FlagCompressed != 0 {
			continue
		}
		r := zbx.NewReader(&loopReader{data: zbx.AppendFrame(nil, bc.payload, bc.flags)}, zbx.ReaderOptions{})
		if allocs := testing.AllocsPerRun(20, func() {
			if _, _, err := r.ReadFrame(); err != nil {
				t.Fatal(err)
			}
		}); allocs != 0 {
			t.Errorf("%s: %v allocations per frame, want 0", bc.name, allocs)
		}
	}
}
