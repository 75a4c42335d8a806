package api

import (
	"strconv"
	"unicode/utf8"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// A host's IPMI settings as host.create, host.update and
// host.massupdate take them (Zabbix 6.0's ipmi_authtype, ipmi_privilege,
// ipmi_username, ipmi_password), checked as 6.0 checks them (recorded
// from 6.0.14): the numbers must be integers, a number or a string of
// one, but their ranges are not checked ("Incorrect value "x" for int
// field "ipmi_authtype"." otherwise, an application error); the
// username and password are texts of at most 16 and 20 characters (a
// number is taken as its text). The password is a secret: host.get
// returns it as "" (6.0 returns it in clear: an intended difference),
// and it is never logged; the audit log records it as 6.0 records
// secrets, masked.

// ipmiInt is ipmi_authtype or ipmi_privilege.
type ipmiInt struct {
	v    int64
	text string // as given, when it is not an integer
	bad  bool
}

func (n *ipmiInt) decodeParam(b []byte, _ *fieldCtx) error {
	s := phpText(b)
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		*n = ipmiInt{text: s, bad: true}
		return nil
	}
	*n = ipmiInt{v: v}
	return nil
}

// phpStr is a text member that 6.0 stores as text whatever JSON scalar
// it was given as (ipmi_username 5 is "5").
type phpStr string

func (s *phpStr) decodeParam(b []byte, _ *fieldCtx) error {
	*s = phpStr(phpText(b))
	return nil
}

// ipmiProblem is 6.0's error for IPMI members it refuses, or nil.
func (p *hostParams) ipmiProblem() error {
	for _, f := range []struct {
		name string
		v    opt[ipmiInt]
	}{{"ipmi_authtype", p.IPMIAuthType}, {"ipmi_privilege", p.IPMIPrivilege}} {
		if f.v.Set && f.v.Value.bad {
			return errApp(`Incorrect value "%s" for int field "%s".`, f.v.Value.text, f.name)
		}
	}
	for _, f := range []struct {
		name string
		v    opt[phpStr]
		max  int
	}{{"ipmi_username", p.IPMIUsername, catalog.MaxIPMIUsernameLen}, {"ipmi_password", p.IPMIPassword, catalog.MaxIPMIPasswordLen}} {
		if n := utf8.RuneCountInString(string(f.v.Value)); f.v.Set && n > f.max {
			shown := string(f.v.Value)
			if f.name == "ipmi_password" {
				shown = "******" // 6.0 shows it; Peregrine does not echo secrets
			}
			return errApp(`Value "%s" is too long for field "%s" - %d characters. Allowed length is %d characters.`, shown, f.name, n, f.max)
		}
	}
	return nil
}

// ipmiSet reports whether any IPMI member was given.
func (p *hostParams) ipmiSet() bool {
	return p.IPMIAuthType.Set || p.IPMIPrivilege.Set || p.IPMIUsername.Set || p.IPMIPassword.Set
}

// ipmi applies the IPMI members given to cur. Out-of-range numbers
// (which 6.0 stores) are clamped to what the catalog keeps: such a host's
// IPMI items are not supported, saying the setting is not one IPMI has.
func (p *hostParams) ipmi(cur catalog.HostIPMI) catalog.HostIPMI {
	if p.IPMIAuthType.Set {
		cur.AuthType = int8(max(-128, min(127, p.IPMIAuthType.Value.v)))
	}
	if p.IPMIPrivilege.Set {
		cur.Privilege = uint8(max(0, min(255, p.IPMIPrivilege.Value.v)))
	}
	if p.IPMIUsername.Set {
		cur.Username = string(p.IPMIUsername.Value)
	}
	if p.IPMIPassword.Set {
		cur.Password = string(p.IPMIPassword.Value)
	}
	return cur
}

// ipmiFields are a host's IPMI members in host.get's shape: the
// password is never returned.
func ipmiFields(o object, h *catalog.Host) {
	o["ipmi_authtype"] = strconv.Itoa(int(h.Ext().IPMI.AuthType))
	o["ipmi_privilege"] = strconv.Itoa(int(h.Ext().IPMI.Privilege))
	o["ipmi_username"] = h.Ext().IPMI.Username
	o["ipmi_password"] = ""
}
