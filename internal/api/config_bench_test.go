package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/catalog/catalogtest"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
)

// go test -run '^$' -bench ItemGet -benchtime 5x ./internal/api/
//
// BenchmarkItemGet lists 100k items (100 hosts × 1,000) with item.get over
// HTTP, as a dashboard's item picker does.
func BenchmarkItemGet(b *testing.B) {
	var spec catalog.Spec
	for h := 0; h < 100; h++ {
		hs := catalog.HostSpec{Host: "host-" + strconv.Itoa(h), Groups: []string{"G"}}
		for i := 0; i < 1000; i++ {
			hs.Items = append(hs.Items, catalog.ItemSpec{Key: "item[" + strconv.Itoa(i) + "]", ValueType: "float"})
		}
		spec.Hosts = append(spec.Hosts, hs)
	}
	cat := catalogtest.Open(b, spec)
	srv := httptest.NewServer(New(Options{Catalog: cat, History: memstore.New(), Auth: &fakeAuth{sessions: map[string]User{"t": {ID: 1, Role: RoleUser}}}}).Handler())
	defer srv.Close()
	body := `{"jsonrpc":"2.0","method":"item.get","params":{"output":["name","key_","value_type","hostid","status","state","units","delay"],"webitems":true,"filter":{"value_type":[0,3]}},"id":1,"auth":"t"}`
	var size int64
	for b.Loop() {
		resp, err := http.Post(srv.URL, "application/json-rpc", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		size, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/call")
	b.ReportMetric(float64(size)/1e6, "MB/response")
}
