package catalog

// The rarely changed part of a Host (issue 30: the heap per item, of
// which a host of 10 items is a tenth). Nearly every host keeps
// Zabbix's default encryption and IPMI settings and has no inventory,
// UUID or discovery link: those hosts share one HostExtra, and a Host
// is 224 bytes instead of 360.

// noHostExtra is what Ext returns for a host without a HostExtra.
// Nothing writes it (TestNoHostExtraStaysZero).
var noHostExtra HostExtra

// defaultHostExtra is the one every host with Zabbix's defaults shares
// (shareHostExtra). Nothing writes it.
var defaultHostExtra = HostExtra{TLS: DefaultHostTLS, IPMI: DefaultHostIPMI}

// Ext returns the host's rarely changed fields, never nil. The result
// MUST NOT be modified: it may be shared with other hosts and
// snapshots; MutExt gives one to write.
func (h *Host) Ext() *HostExtra {
	if h.Extra == nil {
		return &noHostExtra
	}
	return h.Extra
}

// MutExt gives h a copy of its HostExtra of its own (a new zero one if
// it had none) and returns it to be written: copy on write, since a
// HostExtra may be shared. Writers that set several fields may call it
// for each, but never twice in one assignment.
func (h *Host) MutExt() *HostExtra {
	x := new(HostExtra)
	if h.Extra != nil {
		*x = *h.Extra
	}
	h.Extra = x
	return x
}

// shareHostExtra drops h's HostExtra when every field is zero and makes
// it the shared default one when it holds Zabbix's defaults, so that
// the hosts of a snapshot hold one HostExtra between them. finishHost
// calls it on every host a snapshot gets.
func (h *Host) shareHostExtra() {
	switch x := h.Extra; {
	case x == nil || x == &defaultHostExtra:
	case *x == noHostExtra:
		h.Extra = nil
	case *x == defaultHostExtra:
		h.Extra = &defaultHostExtra
	}
}

// loadExt returns h's HostExtra to write while Open loads h: a host
// being loaded owns its HostExtra (made by loadSnapshot), so the loaders
// fill it in place instead of copying it per field.
func loadExt(h *Host) *HostExtra {
	if h.Extra == nil {
		h.Extra = new(HostExtra)
	}
	return h.Extra
}
