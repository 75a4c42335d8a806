package api

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// go test -run '^$' -bench ItemCreate -benchtime 10x -count 6 ./internal/api/
//
// BenchmarkItemCreate creates 10,000 trapper items with one item.create
// call over HTTP, on a fresh host each time (deleted again outside the
// timer): JSON decoding, validation, one SQLite transaction, one snapshot
// rebuild and the response.
func BenchmarkItemCreate(b *testing.B) {
	const n = 10000
	f := newWriteFixture(b)
	g := f.ids(b, "hostgroup.create", `{"name":"G"}`, "groupids")[0]
	var bodySize int
	for b.Loop() {
		b.StopTimer()
		hid := f.ids(b, "host.create", `{"host":"bench","groups":[{"groupid":"`+g+`"}]}`, "hostids")[0]
		body := `{"jsonrpc":"2.0","method":"item.create","params":` + itemBatch(hid, n) + `,"id":1,"auth":"super"}`
		bodySize = len(body)
		b.StartTimer()
		resp, err := http.Post(f.srv.URL, "application/json-rpc", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		b.StopTimer()
		if !strings.Contains(string(out), `"itemids"`) || f.cat.Snapshot().ItemCount() != n {
			b.Fatalf("item.create: %.200s", out)
		}
		f.ok(b, "host.delete", `["`+hid+`"]`)
		b.StartTimer()
	}
	b.SetBytes(int64(bodySize))
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "items/s")
	b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/call")
}
