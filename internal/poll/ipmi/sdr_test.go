package ipmi

import (
	"encoding/hex"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// simRecords are the two records testutil.IPMISimSensors compiles to
// (sdrcomp -r, openipmi 2.0.33): a Full threshold temperature sensor and
// a Compact sensor-specific power supply sensor.
const (
	simFull    = "0100510133200001070177040101000000703800000100000500f6c101f000000000ff000000000000000000000000c84350552054656d70"
	simCompact = "02005102252000020a014500086f000000000f00c000000000000000000000ca50533120537461747573"
)

func mustHex(t testing.TB, s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseSDR(t *testing.T) {
	f := func(rec string, want sensor) {
		t.Helper()
		got, err := parseSDR(mustHex(t, rec))
		if err != nil {
			t.Fatalf("parseSDR(%s): %v", rec, err)
		}
		if d := cmp.Diff(want, *got, cmp.AllowUnexported(sensor{})); d != "" {
			t.Errorf("parseSDR(%s) (-want +got):\n%s", rec, d)
		}
	}
	f(simFull, sensor{id: "CPU Temp", fullName: "(7.1).CPU Temp", owner: 0x20, number: 1, entity: 7, instance: 1,
		sensorType: 1, readingType: 1, readable: 0x38, full: true, baseUnit: 1, m: 5, b: -10, rExp: -1})
	f(simCompact, sensor{id: "PS1 Status", fullName: "(10.1).PS1 Status", owner: 0x20, number: 2, entity: 10, instance: 1,
		sensorType: 8, readingType: 0x6f, readingMask: 0x0f, format: 3})
	if _, err := parseSDR(mustHex(t, "0300510312")); err != errNotSensor {
		t.Errorf("an event-only record: %v, want errNotSensor", err)
	}
	if _, err := parseSDR(mustHex(t, simFull)[:30]); err == nil {
		t.Error("a truncated Full record parsed")
	}
}

// TestConvert: the formula of IPMI 2.0 §36.3 with the simulator's
// factors, and values written as Zabbix writes them.
func TestConvert(t *testing.T) {
	s, err := parseSDR(mustHex(t, simFull))
	if err != nil {
		t.Fatal(err)
	}
	for raw, want := range map[uint8]string{0x60: "47", 0x95: "73.5", 0x70: "55", 0x00: "-1", 0xff: "126.5"} {
		if got := string(formatValue(nil, s.convert(raw))); got != want {
			t.Errorf("raw %#x: %s, want %s", raw, got, want)
		}
	}
	s.format = 2 // two's complement
	if got := string(formatValue(nil, s.convert(0xff))); got != "-1.5" {
		t.Errorf("two's complement 0xff: %s, want -1.5", got)
	}
}

// TestStateText: state names as 6.0.14 showed them for the simulator's
// sensors (recorded: "presence detected, power supply AC lost" for 9,
// "upper non-critical - out of range, upper critical - out of range"
// for 24).
func TestStateText(t *testing.T) {
	full, _ := parseSDR(mustHex(t, simFull))
	compact, _ := parseSDR(mustHex(t, simCompact))
	for _, c := range []struct {
		s      *sensor
		states uint16
		want   string
	}{
		{compact, 9, "presence detected, power supply AC lost"},
		{full, 24, "upper non-critical - out of range, upper critical - out of range"},
		{full, 0, ""},
		{&sensor{readingType: 3}, 2, "state asserted"},
		{&sensor{readingType: 0x6f, sensorType: 0xc0}, 1, "unknown"},
	} {
		if got := stateText(c.s, c.states); got != c.want {
			t.Errorf("stateText(%s, %d) = %q, want %q", c.s.id, c.states, got, c.want)
		}
	}
}

func TestAppendJSONString(t *testing.T) {
	if got := string(appendJSONString(nil, "a\"b\\c\n\x01é")); got != `"a\"b\\c\u000a\u0001é"` {
		t.Errorf("got %s", got)
	}
}

// FuzzParseSDR: any record parses or is refused, never panics, and a
// parsed sensor's name and conversion are usable.
func FuzzParseSDR(f *testing.F) {
	f.Add(mustHex(f, simFull))
	f.Add(mustHex(f, simCompact))
	f.Add([]byte{1, 0, 0x51, 1, 0})
	f.Fuzz(func(t *testing.T, rec []byte) {
		s, err := parseSDR(rec)
		if err != nil {
			return
		}
		_ = s.convert(0x7f)
		_ = stateText(s, 0x7fff)
		if len(s.id) > 64 {
			t.Fatalf("an ID string of %d bytes from a record of %d", len(s.id), len(rec))
		}
	})
}
