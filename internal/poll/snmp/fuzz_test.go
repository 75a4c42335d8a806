package snmp

import (
	"testing"

	"github.com/gosnmp/gosnmp"

	"github.com/peregrine-mon/peregrine/internal/poll"
)

// FuzzResponse decodes arbitrary bytes as an SNMP response (as gosnmp
// does for the checker) and maps it onto a GET of three OIDs: nothing
// panics, every OID gets exactly one outcome unless the verdict is a
// split or a drop, a failure always has a message, and no value exceeds
// the bound.
func FuzzResponse(f *testing.F) {
	oids := []string{".1.3.6.1.2.1.1.5.0", ".1.3.6.1.2.1.1.3.0", ".1.3.6.1.2.1.2.2.1.6.2"}
	for _, p := range []*gosnmp.SnmpPacket{
		{Version: gosnmp.Version2c, Community: "public", PDUType: gosnmp.GetResponse, RequestID: 7, Variables: []gosnmp.SnmpPDU{
			{Name: oids[0], Type: gosnmp.OctetString, Value: []byte("name")},
			{Name: oids[1], Type: gosnmp.TimeTicks, Value: uint32(5)},
			{Name: oids[2], Type: gosnmp.NoSuchInstance}}},
		{Version: gosnmp.Version1, Community: "public", PDUType: gosnmp.GetResponse, Error: gosnmp.NoSuchName, ErrorIndex: 2,
			Variables: []gosnmp.SnmpPDU{{Name: oids[0], Type: gosnmp.Null}}},
		{Version: gosnmp.Version2c, Community: "public", PDUType: gosnmp.GetResponse, Error: gosnmp.TooBig},
	} {
		b, err := p.MarshalMsg()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x30, 0x03, 0x02, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		pkt, err := (&gosnmp.GoSNMP{}).SnmpDecodePacket(data)
		if err != nil {
			return // the checker reports it as a malformed response
		}
		const maxValue = 64
		ans := answerGet(oids, pkt, maxValue, nil)
		switch {
		case ans.split:
			return
		case ans.drop >= 0:
			if ans.drop >= len(oids) || len(ans.outs) != 1 || ans.outs[0].msg == "" {
				t.Fatalf("drop %d with %+v", ans.drop, ans.outs)
			}
			return
		}
		if len(ans.outs) != len(oids) {
			t.Fatalf("%d outcomes for %d OIDs", len(ans.outs), len(oids))
		}
		for i, o := range ans.outs {
			switch o.status {
			case poll.OK:
				if len(o.value) > maxValue || cap(o.value) != len(o.value) {
					t.Fatalf("outcome %d: value of %d bytes (cap %d)", i, len(o.value), cap(o.value))
				}
			case poll.NotSupported:
				if o.msg == "" {
					t.Fatalf("outcome %d: not supported without a message", i)
				}
			default:
				t.Fatalf("outcome %d: status %v", i, o.status)
			}
		}
	})
}
