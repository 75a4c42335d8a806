package snmpoid

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	f := func(in string, want Request) {
		t.Helper()
		got, err := Parse(in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("Parse(%q) (-want +got):\n%s", in, d)
		}
	}
	f("1.3.6.1.2.1.1.3.0", Request{OID: ".1.3.6.1.2.1.1.3.0"})
	f(".1.3.6.1.2.1.1.3.0", Request{OID: ".1.3.6.1.2.1.1.3.0"})
	f("SNMPv2-MIB::sysUpTime.0", Request{OID: ".1.3.6.1.2.1.1.3.0"})
	f("sysName.0", Request{OID: ".1.3.6.1.2.1.1.5.0"})
	f("IF-MIB::ifHCInOctets.2", Request{OID: ".1.3.6.1.2.1.31.1.1.1.6.2"})
	f("DISMAN-EVENT-MIB::sysUpTimeInstance", Request{OID: ".1.3.6.1.2.1.1.3.0"})
	f(`ifInOctets["index","ifDescr","eth0"]`, Request{Kind: DynamicIndex, OID: ".1.3.6.1.2.1.2.2.1.10",
		IndexOID: ".1.3.6.1.2.1.2.2.1.2", IndexValue: "eth0"})
	f(`1.3.6.1.2.1.2.2.1.10["index","1.3.6.1.2.1.2.2.1.2","eth 0, main"]`, Request{Kind: DynamicIndex, OID: ".1.3.6.1.2.1.2.2.1.10",
		IndexOID: ".1.3.6.1.2.1.2.2.1.2", IndexValue: "eth 0, main"})
	f(`discovery[{#IFDESCR},1.3.6.1.2.1.2.2.1.2,{#IFTYPE},IF-MIB::ifType]`, Request{Kind: Discovery,
		Macros: []string{"{#IFDESCR}", "{#IFTYPE}"}, OIDs: []string{".1.3.6.1.2.1.2.2.1.2", ".1.3.6.1.2.1.2.2.1.3"}})
}

func TestParseErrors(t *testing.T) {
	f := func(in, wantErr string) {
		t.Helper()
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("Parse(%q) = %v; want an error containing %q", in, err, wantErr)
		}
	}
	f("", "cannot be empty")
	f(strings.Repeat("1.", 300)+"1", "more than 512")
	f("1", "at least two numbers")
	f("1.3.6..1", `"" is not a number`)
	f("1.3.x", `"x" is not a number`)
	f("3.1", "first number must be 0, 1 or 2")
	f("1.3.4294967296", "not a number")
	f("1.3.01", "not a number")
	f("CISCO-MIB::cpmCPUTotal5sec.1", "Peregrine loads no MIB files")
	f("IF-MIB::sysName.0", "sysName is in SNMPv2-MIB, not IF-MIB")
	f("sysNameX.0", "unknown OID")
	f("ifDescr-1", "unknown OID")
	f(`walk[1.3.6.1.2.1.2.2.1.2]`, "Zabbix 6.4 form")
	f(`ifInOctets["index","ifDescr"]`, "three parameters")
	f(`ifInOctets["idx","ifDescr","eth0"]`, "three parameters")
	f(`discovery[{#A}]`, "pairs")
	f(`discovery[A,1.3.6]`, "not an LLD macro")
	f(`discovery[{#A},1.3,{#A},1.4]`, "used twice")
	f(`discovery[{#SNMPINDEX},1.3]`, "used twice")
	f(`discovery[{#A},[1.3]]`, "array")
	f(`ifInOctets["index","ifDescr","eth0"`, "cannot parse")
}

// FuzzParse: any input gives a request or an error, never a panic, and
// every OID of a request is canonical (resolves to itself).
func FuzzParse(f *testing.F) {
	for _, s := range []string{"1.3.6.1.2.1.1.3.0", "IF-MIB::ifInOctets.1", `ifInOctets["index","ifDescr","eth0"]`, `discovery[{#A},1.3.6]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			return
		}
		for _, oid := range append([]string{r.OID, r.IndexOID}, r.OIDs...) {
			if oid == "" {
				continue
			}
			if again, err := Resolve(oid); err != nil || again != oid {
				t.Fatalf("%q: OID %q is not canonical (%q, %v)", s, oid, again, err)
			}
		}
	})
}
