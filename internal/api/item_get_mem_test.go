package api

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// countingWriter is a ResponseWriter that keeps nothing: it counts.
type countingWriter struct {
	h http.Header
	n int
}

func (w *countingWriter) Header() http.Header         { return w.h }
func (w *countingWriter) WriteHeader(int)             {}
func (w *countingWriter) Write(b []byte) (int, error) { w.n += len(b); return len(b), nil }

// TestItemGetMemoryBounded: item.get without a limit streams its answer,
// so that a call allocates a small fraction of what it sends (issue 25:
// at 100k items one call held about 160 MB, four at once 983 MB; the
// answer was built whole and copied twice). Measured as the bytes the
// call allocates against the bytes of its answer, a ratio that does not
// depend on the machine: before the fix it was about 3.6, now about
// 0.01 (BenchmarkItemGet has the figures at 100k items).
func TestItemGetMemoryBounded(t *testing.T) {
	var spec catalog.Spec
	for h := 0; h < 20; h++ {
		hs := catalog.HostSpec{Host: "host-" + strconv.Itoa(h), Groups: []string{"G"}}
		for i := 0; i < 1000; i++ {
			hs.Items = append(hs.Items, catalog.ItemSpec{Key: "item[" + strconv.Itoa(i) + "]", ValueType: "float"})
		}
		spec.Hosts = append(spec.Hosts, hs)
	}
	cat := catalogtest.Open(t, spec)
	fa := &fakeAuth{sessions: map[string]User{"super": {ID: 1, Role: RoleSuperAdmin}}}
	h := New(Options{Catalog: cat, History: memstore.New(), Auth: fa}).Handler()
	call := func() (allocated uint64, sent int) {
		body := `{"jsonrpc":"2.0","method":"item.get","params":{"output":"extend"},"id":1,"auth":"super"}`
		w := &countingWriter{h: http.Header{}}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		h.ServeHTTP(w, httptest.NewRequest("POST", "/api_jsonrpc.php", strings.NewReader(body)))
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc, w.n
	}
	call() // warm the pools
	allocated, sent := call()
	t.Logf("item.get of 20k items, every field: %d bytes sent, %d allocated (%.3f of the answer)", sent, allocated, float64(allocated)/float64(sent))
	if sent < 15e6 {
		t.Fatalf("the answer has %d bytes: not the 20k items", sent)
	}
	if allocated > uint64(sent)/4 {
		t.Fatalf("one item.get allocated %d bytes for an answer of %d: it is not streamed", allocated, sent)
	}
}
