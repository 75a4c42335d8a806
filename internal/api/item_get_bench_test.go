package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/auth"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// go test -run '^$' -bench ItemGet -benchtime 5x -benchmem -count 6 ./internal/api/
//
// BenchmarkItemGet lists 100k items (100 hosts × 1,000) with item.get over
// HTTP, as a dashboard's item picker does: as a super admin (no
// permission checks), and as a user whose user group reads the hosts'
// group (each host checked against the user's rights); and every field
// ("extend"). B/op is the memory one call allocates: the answer is
// streamed, so it stays far below MB/response (issue 25: it was about
// five times the answer, held at once).
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
	fa := &fakeAuth{
		sessions: map[string]User{"super": {ID: 1, Role: RoleSuperAdmin}, "reader": {ID: 2, Role: RoleUser}},
		rights:   map[uint64]auth.Rights{2: auth.NewRights(map[uint64]auth.Permission{cat.Snapshot().Group("G").ID: auth.PermRead})},
	}
	srv := httptest.NewServer(New(Options{Catalog: cat, History: memstore.New(), Auth: fa}).Handler())
	defer srv.Close()
	for _, c := range []struct{ user, output string }{
		{"super", `["name","key_","value_type","hostid","status","state","units","delay"]`},
		{"reader", `["name","key_","value_type","hostid","status","state","units","delay"]`},
		{"super", `"extend"`},
	} {
		user := c.user
		name := "user=" + user
		if c.output == `"extend"` {
			name += "/output=extend"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			body := `{"jsonrpc":"2.0","method":"item.get","params":{"output":` + c.output + `,"webitems":true,"filter":{"value_type":[0,3]}},"id":1,"auth":"` + user + `"}`
			var size int64
			for b.Loop() {
				resp, err := http.Post(srv.URL, "application/json-rpc", strings.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				size, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			if size < 10e6 {
				b.Fatalf("the answer has %d bytes: not the 100k items", size)
			}
			b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/call")
			b.ReportMetric(float64(size)/1e6, "MB/response")
		})
	}
}
