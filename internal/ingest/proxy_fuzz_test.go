package ingest

import (
	"testing"
)

// FuzzDecodeProxyData: any payload decodes or fails with an error; a
// decoded request never holds more rows than the bound.
func FuzzDecodeProxyData(f *testing.F) {
	f.Add([]byte(`{"request":"proxy data","host":"p","session":"0123456789abcdef0123456789abcdef","history data":[{"id":1,"itemid":2,"clock":3,"ns":4,"value":"5"}],"version":"6.0.14"}`))
	f.Add([]byte(`{"request":"proxy data","host":"p","interface availability":[{"interfaceid":1,"available":1,"error":""}],"auto registration":[{}]}`))
	f.Add([]byte(`{"history data":"x"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := DecodeProxyData(b)
		if err == nil && len(d.History) > maxProxyRows {
			t.Fatalf("%d rows decoded", len(d.History))
		}
	})
}
