package zbxtls

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"testing"
)

// FuzzFormatDN feeds arbitrary bytes as a certificate name: never a
// panic, and a name that parses formats to something for every RDN.
func FuzzFormatDN(f *testing.F) {
	seed, _ := asn1.Marshal(pkix.RDNSequence{rdn(oidDC, "com"), rdn(oidCN, `a,b+"x"`)})
	f.Add(seed)
	f.Add([]byte{0x30, 0x00})
	f.Add([]byte{0x30, 0x80})
	f.Fuzz(func(t *testing.T, der []byte) {
		s := FormatDN(der)
		var seq pkix.RDNSequence
		if rest, err := asn1.Unmarshal(der, &seq); err == nil && len(rest) == 0 && nonEmpty(seq) && s == "" {
			t.Errorf("name of %d RDNs formatted as empty", len(seq))
		}
	})
}

func nonEmpty(seq pkix.RDNSequence) bool {
	for _, r := range seq {
		if len(r) > 0 {
			return true
		}
	}
	return false
}
