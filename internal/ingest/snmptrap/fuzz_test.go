package snmptrap

import (
	"net"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
)

// FuzzTrap feeds arbitrary datagrams to the trap decoder and, for those
// it takes, the text formatter: nothing panics, a refusal has a reason,
// and a text is bounded and starts with its PDU INFO section.
func FuzzTrap(f *testing.F) {
	for _, p := range []*gosnmp.SnmpPacket{
		{Version: gosnmp.Version2c, Community: "public", PDUType: gosnmp.SNMPv2Trap, RequestID: 1, Variables: []gosnmp.SnmpPDU{
			{Name: ".1.3.6.1.2.1.1.3.0", Type: gosnmp.TimeTicks, Value: uint32(100)},
			{Name: ".1.3.6.1.6.3.1.1.4.1.0", Type: gosnmp.ObjectIdentifier, Value: ".1.3.6.1.6.3.1.1.5.3"},
			{Name: ".1.3.6.1.4.1.1.3", Type: gosnmp.OctetString, Value: []byte{0, 1, 'a'}}}},
		{Version: gosnmp.Version1, Community: "public", PDUType: gosnmp.Trap, SnmpTrap: gosnmp.SnmpTrap{
			Enterprise: ".1.3.6.1.4.1.8072", AgentAddress: "127.0.0.1", GenericTrap: 6, SpecificTrap: 1, Timestamp: 5,
			Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.4.1.1", Type: gosnmp.Integer, Value: 1}}}},
		{Version: gosnmp.Version2c, Community: "public", PDUType: gosnmp.GetRequest, Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6", Type: gosnmp.Null}}},
	} {
		b, err := p.MarshalMsg()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("not BER"))
	from := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1000}
	v3, err := v3Decoder([]User{{SecurityName: "u", EngineID: []byte{0x80, 0, 0, 0, 1, 2, 3, 4}, SecurityLevel: 1, AuthPassphrase: "authpass1"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		pkt, err := decode(b, v3)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("refusal without a reason")
			}
			return
		}
		text := appendText(nil, &trap{pkt: pkt, from: from, to: "127.0.0.1:162", recv: time.Unix(0, 0).UTC()})
		if len(text) > maxTrapText {
			t.Fatalf("text of %d bytes", len(text))
		}
		if len(text) < 40 || string(text[24:36]) != "\nPDU INFO:\n " {
			t.Fatalf("text %q", text)
		}
	})
}
