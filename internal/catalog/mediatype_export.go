package catalog

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// mediaTypesNode writes media types as 6.0.14's configuration.export
// does (recorded from its exports of every kind): sorted by name, each
// kind's own members in 6.0's order, values equal to the defaults left
// out, a webhook's parameters sorted by name, a script's parameters one
// string a line, message templates by event source and operation mode.
// The SMTP password is never written (Peregrine returns no secret; an
// import that leaves it out keeps the stored one).
func mediaTypesNode(list []*MediaType) *exportNode {
	l := newList()
	for _, m := range natSorted(list, func(m *MediaType) string { return m.Name }) {
		l.add(mediaTypeNode(m))
	}
	return l
}

func mediaTypeNode(m *MediaType) *exportNode {
	n := newMap()
	n.req("name", m.Name)
	n.req("type", enumName(m.Type, mediaTypeNames))
	num := strconv.Itoa
	switch m.Type {
	case MediaEmail:
		n.str("smtp_server", m.SMTPServer, "")
		n.str("smtp_port", num(m.SMTPPort), "25")
		n.str("smtp_helo", m.SMTPHelo, "")
		n.str("smtp_email", m.SMTPEmail, "")
		n.str("smtp_security", enumName(m.SMTPSecurity, smtpSecurityNames), "NONE")
		n.str("smtp_verify_host", enumName(m.SMTPVerifyHost, noYesNames), "NO")
		n.str("smtp_verify_peer", enumName(m.SMTPVerifyPeer, noYesNames), "NO")
		n.str("smtp_authentication", enumName(m.SMTPAuth, smtpAuthNames), "NONE")
		n.str("username", m.Username, "")
		n.str("content_type", enumName(m.ContentType, contentTypeNames), "HTML")
	case MediaScript:
		n.str("script_name", m.ExecPath, "")
		if m.ExecParams != "" {
			ps := newList()
			for _, p := range strings.Split(strings.TrimSuffix(m.ExecParams, "\n"), "\n") {
				ps.add(&exportNode{scalar: p})
			}
			n.put("parameters", ps)
		}
	case MediaSMS:
		n.str("gsm_modem", m.GSMModem, "")
	case MediaWebhook:
		ps := newList()
		for _, p := range natSorted(m.Parameters, func(p MediaParam) string { return p.Name }) {
			pn := newMap()
			pn.req("name", p.Name)
			pn.str("value", p.Value, "")
			ps.add(pn)
		}
		n.sub("parameters", ps, false)
	}
	n.str("status", enumName(m.Status, statusNames), "ENABLED")
	n.str("max_sessions", num(m.MaxSessions), "1")
	n.str("attempts", num(m.MaxAttempts), "3")
	n.str("attempt_interval", m.AttemptInterval, "10s")
	if m.Type == MediaWebhook {
		n.str("script", m.Script, "")
		n.str("timeout", m.Timeout, "30s")
		n.str("process_tags", enumName(m.ProcessTags, noYesNames), "NO")
		n.str("show_event_menu", enumName(m.ShowEventMenu, noYesNames), "NO")
		n.str("event_menu_url", m.EventMenuURL, "")
		n.str("event_menu_name", m.EventMenuName, "")
	}
	n.str("description", m.Description, "")
	ts := slices.SortedStableFunc(slices.Values(m.Templates), func(a, b MessageTemplate) int {
		return cmp.Or(cmp.Compare(a.EventSource, b.EventSource), cmp.Compare(a.Recovery, b.Recovery))
	})
	tl := newList()
	for _, t := range ts {
		tn := newMap()
		tn.req("event_source", enumName(t.EventSource, eventSourceNames))
		tn.req("operation_mode", enumName(t.Recovery, operationModeNames))
		tn.str("subject", t.Subject, "")
		tn.str("message", t.Message, "")
		tl.add(tn)
	}
	n.sub("message_templates", tl, false)
	return n
}
