package ingest

import (
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// TestSenderPreprocessing: values of items with steps or dependents are
// preprocessed in the pipeline: they count as processed, as in Zabbix,
// even when their steps or conversion fail, which instead makes the item
// not supported; so do values of items without steps that do not
// convert.
func TestSenderPreprocessing(t *testing.T) {
	ts := startTrapper(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h", Groups: []string{"G"}, Items: []catalog.ItemSpec{
		{Key: "scaled", Preprocessing: []catalog.PreprocSpec{{Type: "MULTIPLIER", Parameters: []string{"1000"}}}},
		{Key: "doc", ValueType: "text"},
		{Key: "doc.v", Type: "dependent", MasterItem: &catalog.MasterItemSpec{Key: "doc"}, Preprocessing: []catalog.PreprocSpec{{Type: "JSONPATH", Parameters: []string{"$.v"}}}},
		{Key: "plain"},
	}}}}, nil)
	_, reply := roundTrip(t, ts.addr, senderFrame(t, 1,
		`{"host":"h","key":"scaled","value":"1.5"}`,
		`{"host":"h","key":"doc","value":"{\"v\":7}"}`,
		`{"host":"h","key":"scaled","value":"abc"}`,
		`{"host":"h","key":"plain","value":"abc"}`,
	))
	if p, f, n := infoCounts(t, reply); p != 4 || f != 0 || n != 4 {
		t.Fatalf("processed %d failed %d total %d, want 4 0 4", p, f, n)
	}
	if st, _ := ts.rt.ItemState(ts.item(t, "h", "plain").ID); !st.NotSupported || st.Error != `Value of type "string" is not suitable for value type "Numeric (float)". Value "abc"` {
		t.Fatalf("plain state %+v", st)
	}
	if got := ts.read(t, "h", "scaled"); len(got) != 1 || got[0].F != 1500 {
		t.Fatalf("scaled: %+v", got)
	}
	if got := ts.read(t, "h", "doc.v"); len(got) != 1 || got[0].F != 7 {
		t.Fatalf("doc.v: %+v", got)
	}
	if st, _ := ts.rt.ItemState(ts.item(t, "h", "scaled").ID); !st.NotSupported || !strings.Contains(st.Error, `cannot apply multiplier "1000" to value "abc"`) {
		t.Fatalf("scaled state %+v", st)
	}
	if got := ts.metric(t, "peregrine_preprocessing_not_supported_total"); got != 1 {
		t.Errorf("not supported counted %v, want 1", got)
	}
}
