package catalog

import (
	"errors"
	"github.com/peregrine-mon/peregrine/internal/zbx/delay"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/history"
)

func TestValidate(t *testing.T) {
	// f checks that the spec made by a modification of a valid one fails
	// validation with an error containing want.
	f := func(want string, modify func(s *Spec)) {
		t.Helper()
		s := testSpec()
		modify(&s)
		err := s.Validate()
		if err == nil {
			t.Fatalf("no error, want one containing %q", want)
		}
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not contain %q", err, want)
		}
	}
	item := func(s *Spec) *ItemSpec { return &s.Hosts[1].Items[2] }

	f(`hosts[1].items[2].key: invalid item key "a["`, func(s *Spec) { item(s).Key = "a[" })
	f(`hosts[1].items[2].key: invalid item key "a[b]c"`, func(s *Spec) { item(s).Key = "a[b]c" })
	f(`hosts[1].items[2].key: item key is required`, func(s *Spec) { item(s).Key = "" })
	f(`hosts[1].items[2].key: item key of 2049 characters is longer than the limit of 2048`, func(s *Spec) { item(s).Key = "k[" + strings.Repeat("x", 2046) + "]" })
	f(`hosts[0].items[3].key: duplicate key "app.latency" (first at hosts[0].items[1])`, func(s *Spec) { s.Hosts[0].Items[3].Key = "app.latency" })
	f(`hosts[1].items[2].value_type: unknown value type "double"`, func(s *Spec) { item(s).ValueType = "double" })
	f(`hosts[1].items[2].value_type: unknown value type "5"`, func(s *Spec) { item(s).ValueType = "5" })
	f(`hosts[1].items[2].type: unknown item type "aggregate"`, func(s *Spec) { item(s).Type = "aggregate" })
	f(`hosts[1].items[2].params: a calculated item needs its formula in params`, func(s *Spec) { item(s).Type = "calculated" })
	f(`hosts[1].items[2].master_item: a dependent item needs a master item`, func(s *Spec) { item(s).Type = "dependent" })
	f(`hosts[1].items[2].type: unknown item type "1"`, func(s *Spec) { item(s).Type = "1" })
	f(`hosts[1].items[2].history: time value "90 days" is not a number`, func(s *Spec) { item(s).History = "90 days" })
	f(`hosts[1].items[2].history: period "30m" is out of range: use 0 or 1h..9125d`, func(s *Spec) { item(s).History = "30m" })
	f(`hosts[1].items[2].history: period "9126d" is out of range`, func(s *Spec) { item(s).History = "9126d" })
	f(`hosts[0].items[0].trends: period "12h" is out of range: use 0 or 1d..9125d`, func(s *Spec) { s.Hosts[0].Items[0].Trends = "12h" })
	f(`hosts[0].items[0].trends: period "9126d" is out of range`, func(s *Spec) { s.Hosts[0].Items[0].Trends = "9126d" })
	f(`hosts[0].items[2].trends: must be "0" for value type character`, func(s *Spec) { s.Hosts[0].Items[2].Trends = "365d" })
	f(`hosts[0].items[0].trends: time value "-1" is not a number`, func(s *Spec) { s.Hosts[0].Items[0].Trends = "-1" })
	f(`hosts[1].items[2].delay: update interval "2d" is longer than one day`, func(s *Spec) { item(s).Delay = "2d" })
	f(`hosts[1].items[2].delay: update interval "0" would never poll this http_agent item`, func(s *Spec) { item(s).Delay = "0" })
	f(`hosts[1].items[2].delay: update interval "1m;" has an empty custom interval`, func(s *Spec) { item(s).Delay = "1m;" })
	f(`hosts[1].items[2].delay: time value "s" has no number`, func(s *Spec) { item(s).Delay = "s" })
	// Custom intervals of polled items go through the scheduler's parser.
	f(`hosts[1].items[2].delay: update interval "1m;50s/8-9,09:00-18:00": flexible interval`, func(s *Spec) { item(s).Delay = "1m;50s/8-9,09:00-18:00" })
	f(`hosts[1].items[2].delay: update interval "1m;wd1-5hx": scheduling interval`, func(s *Spec) { item(s).Delay = "1m;wd1-5hx" })
	f(`hosts[1].items[2].status: unknown status "on"`, func(s *Spec) { item(s).Status = "on" })
	f(`hosts[1].items[2].name: value is too long (256 characters, the limit is 255)`, func(s *Spec) { item(s).Name = strings.Repeat("é", 256) })
	f(`hosts[1].items[2].units: "\xff" is not valid UTF-8`, func(s *Spec) { item(s).Units = "\xff" })

	f(`hosts[1].host: host name is required`, func(s *Spec) { s.Hosts[1].Host = "" })
	f(`hosts[1].host: host name "a/b" contains '/'`, func(s *Spec) { s.Hosts[1].Host = "a/b" })
	f(`hosts[1].host: host name "ünï" contains`, func(s *Spec) { s.Hosts[1].Host = "ünï" })
	f(`hosts[1].host: host name "`+strings.Repeat("h", 129)+`" is longer than 128 characters`, func(s *Spec) { s.Hosts[1].Host = strings.Repeat("h", 129) })
	f(`hosts[1].host: duplicate host "web-01" (first at hosts[0])`, func(s *Spec) { s.Hosts[1].Host = "web-01" })
	f(`hosts[1].status: unknown status "monitored"`, func(s *Spec) { s.Hosts[1].Status = "monitored" })
	f(`hosts[1].name: value is too long (129 characters, the limit is 128)`, func(s *Spec) { s.Hosts[1].Name = strings.Repeat("n", 129) })
	f(`hosts[1].groups[1]: group "Network" is listed twice`, func(s *Spec) { s.Hosts[1].Groups = []string{"Network", "Network"} })
	f(`hosts[1].groups[0]: group name is required`, func(s *Spec) { s.Hosts[1].Groups = []string{""} })
	f(`groups[1].name: duplicate group "Linux servers"`, func(s *Spec) { s.Groups[1].Name = "Linux servers" })
	f(`groups[0].name: group name " x" has leading or trailing spaces`, func(s *Spec) { s.Groups[0].Name = " x" })

	// Several errors are reported together, up to a limit.
	f("hosts[0].host: host name is required\nhosts[1].items[2].type", func(s *Spec) { s.Hosts[0].Host = ""; item(s).Type = "x" })
	f("... and 5 more errors", func(s *Spec) {
		for i := range 15 {
			s.Hosts = append(s.Hosts, HostSpec{Host: "bad/" + string(rune('a'+i))})
		}
	})

	// A valid spec, with every field defaulted or set.
	if err := testSpec().Validate(); err != nil {
		t.Fatalf("testSpec: %v", err)
	}
	if err := (Spec{}).Validate(); err != nil {
		t.Fatalf("empty spec: %v", err)
	}
}

func TestValidateFieldError(t *testing.T) {
	s := testSpec()
	s.Hosts[0].Items[0].Key = "x["
	var fe *FieldError
	if err := s.Validate(); !errors.As(err, &fe) || fe.Field != "hosts[0].items[0].key" {
		t.Fatalf("error %v is not a FieldError for hosts[0].items[0].key", err)
	}
}

func TestSpecFiles(t *testing.T) {
	expected := map[string]string{
		"unknown_field.bad.yaml":  "line 7: field unit not found",
		"bad_key.bad.yaml":        `hosts[0].items[1].key: invalid item key "system.cpu.load[all,avg1"`,
		"bad_value_type.bad.yaml": `hosts[0].items[0].value_type: unknown value type "number"`,
		"duplicate_key.bad.yaml":  `hosts[1].items[2].key: duplicate key "agent.ping" (first at hosts[1].items[0])`,
		"bad_retention.bad.yaml":  `hosts[0].items[0].history: time value "1y" is not a number`,
		"bad_host.bad.yaml":       `hosts[0].host: host name "web:01" contains ':'`,
		"wrong_shape.bad.yaml":    "cannot unmarshal",
		"two_documents.bad.yaml":  "line 3: a second YAML document is not supported",
	}
	files, err := filepath.Glob("testdata/*.bad.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(expected) {
		t.Fatalf("%d bad files on disk, %d expectations", len(files), len(expected))
	}
	for _, f := range files {
		want, ok := expected[filepath.Base(f)]
		if !ok {
			t.Fatalf("no expectation for %s", f)
		}
		_, err := LoadSpecFile(f)
		if err == nil {
			t.Errorf("%s: expected an error containing %q, got none", f, want)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %q does not contain %q", f, err, want)
		}
	}

	good, err := filepath.Glob("testdata/*.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(good) < 2 {
		t.Fatalf("only %d good files", len(good))
	}
	for _, f := range good {
		if _, err := LoadSpecFile(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	full, err := LoadSpecFile("testdata/full.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := Spec{
		Groups: []GroupSpec{{Name: "Linux servers"}},
		Hosts: []HostSpec{{
			Host: "db-01", Name: "Database 1", Status: "disabled", Groups: []string{"Linux servers", "Databases"},
			Items: []ItemSpec{
				{Key: "pg.connections", Name: "Connections", Type: "zabbix_agent", ValueType: "unsigned",
					Units: "conn", Delay: "30", History: "3600", Trends: "1w", Status: "enabled"},
				{Key: "pg.version", ValueType: "1"},
			},
		}},
	}
	if d := cmp.Diff(want, full); d != "" {
		t.Fatalf("full.good.yaml (-want +got):\n%s", d)
	}
	empty, err := LoadSpecFile("testdata/empty.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(Spec{}, empty); d != "" {
		t.Fatalf("empty.good.yaml (-want +got):\n%s", d)
	}
	if _, err := LoadSpecFile("testdata/does-not-exist.yaml"); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

func TestParseItemType(t *testing.T) {
	for _, c := range []struct {
		in   string
		want ItemType
	}{
		{"trapper", Trapper}, {"2", Trapper}, {"zabbix_agent", ZabbixAgent}, {"0", ZabbixAgent},
		{"zabbix_agent_active", ZabbixAgentActive}, {"7", ZabbixAgentActive}, {"simple", SimpleCheck}, {"3", SimpleCheck},
		{"internal", Internal}, {"5", Internal}, {"external", External}, {"10", External},
		{"http_agent", HTTPAgent}, {"19", HTTPAgent}, {"snmp_agent", SNMPAgent}, {"20", SNMPAgent},
		{"calculated", Calculated}, {"15", Calculated}, {"dependent", Dependent}, {"18", Dependent}, {"script", Script}, {"21", Script},
		{"snmp_trap", SNMPTrap}, {"17", SNMPTrap}, {"jmx", JMX}, {"16", JMX}, {"ssh", SSHAgent}, {"13", SSHAgent}, {"telnet", TelnetAgent}, {"14", TelnetAgent}, {"ipmi", IPMI}, {"12", IPMI},
		{"odbc", ODBC}, {"11", ODBC},
	} {
		got, err := ParseItemType(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseItemType(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
		if back, err := ParseItemType(got.String()); err != nil || back != got {
			t.Errorf("%v does not round-trip through String: %v, %v", got, back, err)
		}
	}
	for _, in := range []string{"", "Trapper", "1", "4", "22", "256", "-2", " 2", "02x", "Calculated", "DEPENDENT"} {
		if got, err := ParseItemType(in); err == nil {
			t.Errorf("ParseItemType(%q) = %v, want an error", in, got)
		}
	}
	if s := ItemType(99).String(); s != "ItemType(99)" {
		t.Errorf("ItemType(99).String() = %q", s)
	}
}

func TestParseValueType(t *testing.T) {
	for _, c := range []struct {
		in   string
		want history.ValueType
	}{
		{"float", history.Float}, {"0", history.Float},
		{"character", history.Str}, {"char", history.Str}, {"str", history.Str}, {"1", history.Str},
		{"log", history.Log}, {"2", history.Log},
		{"unsigned", history.Uint}, {"uint", history.Uint}, {"3", history.Uint},
		{"text", history.Text}, {"4", history.Text},
	} {
		got, err := ParseValueType(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseValueType(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
		if back, err := ParseValueType(ValueTypeName(got)); err != nil || back != got {
			t.Errorf("%v does not round-trip through ValueTypeName: %v, %v", got, back, err)
		}
	}
	for _, in := range []string{"", "Float", "5", "numeric", "string", "00"} {
		if got, err := ParseValueType(in); err == nil {
			t.Errorf("ParseValueType(%q) = %v, want an error", in, got)
		}
	}
}

func TestParseSeconds(t *testing.T) {
	f := func(in string, want int64, wantErr string) {
		t.Helper()
		got, err := delay.ParseSeconds(in)
		if wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Fatalf("delay.ParseSeconds(%q) = %d, %v; want an error containing %q", in, got, err, wantErr)
			}
			return
		}
		if err != nil || got != want {
			t.Fatalf("delay.ParseSeconds(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	f("0", 0, "")
	f("30", 30, "")
	f("30s", 30, "")
	f("5m", 300, "")
	f("2h", 7200, "")
	f("90d", 90*86400, "")
	f("1w", 7*86400, "")
	f("0d", 0, "")
	f("", 0, "empty")
	f("d", 0, "has no number")
	f("1y", 0, "is not a number")
	f("1.5h", 0, "is not a number")
	f("-1", 0, "is not a number")
	f("+1", 0, "is not a number")
	f(" 1", 0, "is not a number")
	f("1 ", 0, "is not a number")
	f("1M", 0, "is not a number")
	f("{$HISTORY}", 0, "is not a number")
	f("99999999999999999999999w", 0, "too large")
}

func FuzzParseSpec(f *testing.F) {
	for _, pattern := range []string{"testdata/*.yaml", "../../docs/import-example.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Add([]byte("hosts: [{host: a, items: [{key: 'k[\"x\",[a,b]]', delay: '1m;wd1-5h9-18'}]}]"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSpec(b)
		if err != nil {
			return
		}
		// A spec that validated normalizes, and stays valid.
		ns, err := s.normalize(true, nil)
		if err != nil {
			t.Fatalf("ParseSpec accepted a spec that normalize rejects: %v", err)
		}
		for _, h := range ns.hosts {
			for _, it := range h.items {
				if !it.Type.Valid() || !it.ValueType.Valid() || it.Delay == "" || it.History == "" || it.Trends == "" {
					t.Fatalf("normalized item lacks a default: %+v", it)
				}
			}
		}
	})
}

func FuzzParseSeconds(f *testing.F) {
	for _, s := range []string{"0", "30s", "90d", "1w", "1y", "", "-1", "18446744073709551615s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := delay.ParseSeconds(s)
		if err == nil && n < 0 {
			t.Fatalf("delay.ParseSeconds(%q) = %d", s, n)
		}
	})
}
