package preprocess

import (
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// promText is the Zabbix docs' Prometheus example, with a histogram and
// a line with a timestamp added.
const promText = `# HELP wmi_logical_disk_free_bytes Free space in bytes (LogicalDisk.PercentFreeSpace)
# TYPE wmi_logical_disk_free_bytes gauge
wmi_logical_disk_free_bytes{volume="C:"} 3.5180249088e+11
wmi_logical_disk_free_bytes{volume="D:"} 2.627731456e+09
wmi_logical_disk_free_bytes{volume="HarddiskVolume4"} 4.59276288e+08
# a comment
# TYPE http_request_duration_seconds histogram
http_request_duration_seconds_bucket{le="0.5", path="/a \"b\""} 129389 1700000000000
http_request_duration_seconds_count 144320
up 1
`

func TestPrometheusPattern(t *testing.T) {
	step := func(params string) Step { return mustStep(t, "22", params, "0", "") }
	checkStep(t, step("wmi_logical_disk_free_bytes{volume=\"C:\"}\nvalue\n"), []stepCase{
		{vt: history.Float, in: promText, want: "3.5180249088e+11"},
		{vt: history.Float, in: "up 1\n", wantErr: "no data matches the specified Prometheus pattern"},
		{vt: history.Float, in: "bad{ 1\n", wantErr: `cannot parse Prometheus data at line 1: invalid label name`},
		{vt: history.Float, in: "up x\n", wantErr: `cannot parse Prometheus data at line 1: invalid value "x"`},
	})
	checkStep(t, step("wmi_logical_disk_free_bytes\nvalue\n"), []stepCase{
		{vt: history.Float, in: promText, wantErr: "data extraction error: 3 metrics match the Prometheus pattern; use a function to aggregate them"},
	})
	checkStep(t, step("{__name__=~\"^wmi_.*\",volume!~\"[CD]:\"}\nlabel\nvolume"), []stepCase{{vt: history.Str, in: promText, want: "HarddiskVolume4"}})
	checkStep(t, step("http_request_duration_seconds_bucket{path=\"/a \\\"b\\\"\"}\nvalue\n"), []stepCase{{vt: history.Float, in: promText, want: "129389"}})
	checkStep(t, step("wmi_logical_disk_free_bytes\nfunction\nsum"), []stepCase{{vt: history.Float, in: promText, want: "354889498624"}})
	checkStep(t, step("wmi_logical_disk_free_bytes\nfunction\ncount"), []stepCase{{vt: history.Uint, in: promText, want: "3"}})
	checkStep(t, step("wmi_logical_disk_free_bytes\nfunction\nmin"), []stepCase{{vt: history.Float, in: promText, want: "459276288"}})
	checkStep(t, step("wmi_logical_disk_free_bytes{volume=~\"[CD]:\"}\nfunction\nmax"), []stepCase{{vt: history.Float, in: promText, want: "351802490880"}})
	checkStep(t, step("up == 1\nvalue\n"), []stepCase{{vt: history.Uint, in: promText, want: "1"}, {vt: history.Uint, in: "up 0", wantErr: "no data matches the specified Prometheus pattern"}})
	for _, bad := range []string{"\nvalue\n", "up{a=1}\nvalue\n", "up\nlabel\n", "up\nfunction\nmedian", "up == x\nvalue\n", "up{a=~\"(\"}\nvalue\n"} {
		if _, err := ParseStep("22", bad, "0", ""); err == nil {
			t.Errorf("ParseStep(22, %q) accepted", bad)
		}
	}
}

func TestPrometheusToJSON(t *testing.T) {
	checkStep(t, mustStep(t, "23", "wmi_logical_disk_free_bytes{volume=\"C:\"}", "0", ""), []stepCase{{vt: history.Text, in: promText,
		want: `[{"name":"wmi_logical_disk_free_bytes","value":"3.5180249088e+11","line":"wmi_logical_disk_free_bytes{volume=\"C:\"} 3.5180249088e+11","labels":{"volume":"C:"},"help":"Free space in bytes (LogicalDisk.PercentFreeSpace)","type":"gauge"}]`}})
	out, err := runOne(t, mustStep(t, "23", "{__name__=~\"http_.*\"}", "0", ""), history.Text, promText)
	if err != nil || strings.Count(out.Text, `"type":"histogram"`) != 2 || !strings.Contains(out.Text, `"labels":{"le":"0.5","path":"/a \"b\""}`) {
		t.Fatalf("histogram samples: %+v, %v", out, err)
	}
	checkStep(t, mustStep(t, "23", "nothing", "0", ""), []stepCase{{vt: history.Text, in: promText, want: "[]"}})
	// An empty pattern converts every sample (the GitLab template's
	// gitlab.get_metrics).
	out, err = runOne(t, mustStep(t, "23", "", "0", ""), history.Text, promText)
	if err != nil || strings.Count(out.Text, `"name":`) != 6 {
		t.Fatalf("empty pattern: %+v, %v", out, err)
	}
}
