package alert

import (
	"strconv"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
)

var severityNames = [...]string{"Not classified", "Information", "Warning", "Average", "High", "Disaster"}

// SeverityName is Zabbix's English name of a severity.
func SeverityName(s uint8) string {
	if int(s) < len(severityNames) {
		return severityNames[s]
	}
	return "Unknown"
}

// MacroData is what the macros of one notification refer to. Every
// field may be nil or empty: a macro whose data is missing expands to
// "*UNKNOWN*", as Zabbix's do, and an unknown macro is left as written.
type MacroData struct {
	Problem  *event.Event // the problem event
	Recovery *event.Event // the OK event that resolved it, if any
	Ack      *event.Ack   // the acknowledge of an update operation
	Trigger  *catalog.Trigger
	Snap     *catalog.Snapshot
	// LastValue returns an item's last value as text.
	LastValue func(itemID uint64) (string, bool)
	Action    *catalog.Action
	// SendTo, Subject and Message are the alert's, for {ALERT.*}
	// (webhook parameters and script parameters).
	SendTo, Subject, Message string
	Loc                      *time.Location
	// Extra are macros of events other than a trigger's (internal.go,
	// auto-registration's host), by name without braces; they win over
	// the trigger macros of the same name.
	Extra map[string]string
}

const unknown = "*UNKNOWN*"

// Expand replaces the macros of text (see the package documentation for
// the list). It never fails: input that is not a macro is copied.
func Expand(text string, d *MacroData) string {
	if !strings.Contains(text, "{") {
		return text
	}
	var b strings.Builder
	b.Grow(len(text) + 32)
	for {
		i := strings.IndexByte(text, '{')
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		j := strings.IndexByte(text[i+1:], '}')
		if j < 0 {
			b.WriteString(text)
			return b.String()
		}
		// A '{' inside the candidate starts a new candidate: "{{HOST.NAME}"
		// keeps the first brace and expands the macro.
		if k := strings.LastIndexByte(text[i+1:i+1+j], '{'); k >= 0 {
			b.WriteString(text[:i+1+k])
			text = text[i+1+k:]
			continue
		}
		b.WriteString(text[:i])
		m := text[i : i+j+2]
		if v, ok := d.macro(m[1 : len(m)-1]); ok {
			b.WriteString(v)
		} else {
			b.WriteString(m)
		}
		text = text[i+j+2:]
	}
}

func (d *MacroData) loc() *time.Location {
	if d.Loc != nil {
		return d.Loc
	}
	return time.Local
}

func (d *MacroData) date(clock int64) string {
	return time.Unix(clock, 0).In(d.loc()).Format("2006.01.02")
}

func (d *MacroData) time(clock int64) string {
	return time.Unix(clock, 0).In(d.loc()).Format("15:04:05")
}

func tagsText(tags []event.Tag) string {
	var b strings.Builder
	for i, t := range tags {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t.Tag)
		if t.Value != "" {
			b.WriteByte(':')
			b.WriteString(t.Value)
		}
	}
	return b.String()
}

func tagsJSON(tags []event.Tag) string {
	b := []byte{'['}
	for i, t := range tags {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"tag":`...)
		b = strconv.AppendQuote(b, t.Tag)
		b = append(b, `,"value":`...)
		b = strconv.AppendQuote(b, t.Value)
		b = append(b, '}')
	}
	return string(append(b, ']'))
}

// ackActionText is Zabbix's {EVENT.UPDATE.ACTION}: what an update did.
func ackActionText(a uint32) string {
	var parts []string
	for _, p := range []struct {
		bit  uint32
		text string
	}{
		{event.ActionAcknowledge, "acknowledged"}, {event.ActionUnacknowledge, "unacknowledged"},
		{event.ActionMessage, "commented"}, {event.ActionSeverity, "changed severity"}, {event.ActionClose, "closed"},
	} {
		if a&p.bit != 0 {
			parts = append(parts, p.text)
		}
	}
	return strings.Join(parts, ", ")
}

// macro resolves one macro name (without braces).
func (d *MacroData) macro(name string) (string, bool) {
	idx := 1
	if n := len(name); n > 1 && name[n-1] >= '1' && name[n-1] <= '9' && name[n-2] != '.' {
		idx, name = int(name[n-1]-'0'), name[:n-1]
	}
	if v, ok := d.Extra[name]; ok && idx == 1 {
		return v, true
	}
	p, r, t := d.Problem, d.Recovery, d.Trigger
	switch name {
	case "ALERT.SENDTO":
		return d.SendTo, true
	case "ALERT.SUBJECT":
		return d.Subject, true
	case "ALERT.MESSAGE":
		return d.Message, true
	case "ACTION.NAME", "ACTION.ID":
		if d.Action == nil {
			return unknown, true
		}
		if name == "ACTION.ID" {
			return strconv.FormatUint(d.Action.ID, 10), true
		}
		return d.Action.Name, true
	case "HOST.NAME", "HOST.HOST", "HOSTNAME", "HOST.ID":
		h := d.host(idx)
		if h == nil {
			return unknown, true
		}
		switch name {
		case "HOST.NAME":
			return h.Name, true
		case "HOST.ID":
			return strconv.FormatUint(h.ID, 10), true
		}
		return h.Host, true
	case "ITEM.NAME", "ITEM.KEY", "ITEM.ID", "ITEM.LASTVALUE", "ITEM.VALUE":
		it := d.item(idx)
		if it == nil {
			return unknown, true
		}
		switch name {
		case "ITEM.NAME":
			return it.Name, true
		case "ITEM.KEY":
			return it.Key, true
		case "ITEM.ID":
			return strconv.FormatUint(it.ID, 10), true
		}
		if d.LastValue != nil {
			if v, ok := d.LastValue(it.ID); ok {
				// As Zabbix 6.0 writes it: value map, else units.
				return d.Snap.ValueText(it, v, false, d.loc()), true
			}
		}
		return unknown, true
	}
	if idx != 1 {
		return "", false // only host and item macros are indexed
	}
	if strings.HasPrefix(name, "TRIGGER.") {
		if t == nil {
			return unknown, true
		}
		switch name {
		case "TRIGGER.ID":
			return strconv.FormatUint(t.ID, 10), true
		case "TRIGGER.NAME":
			if p != nil {
				return p.Name, true // the name with its macros expanded
			}
			return t.Description, true
		case "TRIGGER.NAME.ORIG":
			return t.Description, true
		case "TRIGGER.SEVERITY":
			return SeverityName(t.Priority), true
		case "TRIGGER.NSEVERITY":
			return strconv.Itoa(int(t.Priority)), true
		case "TRIGGER.DESCRIPTION":
			return t.Comments, true
		case "TRIGGER.URL":
			return t.URL, true
		case "TRIGGER.EXPRESSION":
			return t.Expression, true
		case "TRIGGER.STATUS", "STATUS", "TRIGGER.VALUE":
			v := p != nil && r == nil
			if name == "TRIGGER.VALUE" {
				return map[bool]string{true: "1", false: "0"}[v], true
			}
			return map[bool]string{true: "PROBLEM", false: "OK"}[v], true
		}
		return "", false
	}
	if name == "TRIGGER.STATUS" || name == "STATUS" {
		return unknown, true
	}
	if strings.HasPrefix(name, "EVENT.RECOVERY.") {
		if r == nil {
			return unknown, true
		}
		switch name[len("EVENT.RECOVERY."):] {
		case "ID":
			return strconv.FormatUint(r.ID, 10), true
		case "DATE":
			return d.date(r.Clock), true
		case "TIME":
			return d.time(r.Clock), true
		case "NAME":
			return r.Name, true
		case "STATUS":
			return "RESOLVED", true
		case "VALUE":
			return "0", true
		case "TAGS":
			return tagsText(r.Tags), true
		case "TAGSJSON":
			return tagsJSON(r.Tags), true
		}
		return "", false
	}
	if strings.HasPrefix(name, "EVENT.UPDATE.") {
		a := d.Ack
		if a == nil {
			return unknown, true
		}
		switch name[len("EVENT.UPDATE."):] {
		case "MESSAGE":
			return a.Message, true
		case "ACTION":
			return ackActionText(a.Action), true
		case "DATE":
			return d.date(a.Clock), true
		case "TIME":
			return d.time(a.Clock), true
		}
		return "", false
	}
	if strings.HasPrefix(name, "EVENT.") {
		if p == nil {
			return unknown, true
		}
		switch name[len("EVENT."):] {
		case "ID":
			return strconv.FormatUint(p.ID, 10), true
		case "NAME":
			return p.Name, true
		case "SEVERITY":
			return SeverityName(p.Severity), true
		case "NSEVERITY":
			return strconv.Itoa(int(p.Severity)), true
		case "STATUS":
			if r != nil {
				return "RESOLVED", true
			}
			return "PROBLEM", true
		case "VALUE":
			if r != nil {
				return "0", true
			}
			return "1", true
		case "DATE":
			return d.date(p.Clock), true
		case "TIME":
			return d.time(p.Clock), true
		case "TAGS":
			return tagsText(p.Tags), true
		case "TAGSJSON":
			return tagsJSON(p.Tags), true
		case "OPDATA":
			return p.Opdata, true
		case "ACK.STATUS":
			return map[bool]string{true: "Yes", false: "No"}[p.Acknowledged], true
		case "SOURCE":
			return "0", true
		case "OBJECT":
			return "0", true
		}
		return "", false
	}
	return "", false
}

// host is the trigger's idx-th host (1-based, ascending by ID).
func (d *MacroData) host(idx int) *catalog.Host {
	if d.Trigger == nil || d.Snap == nil || idx > len(d.Trigger.HostIDs) {
		return nil
	}
	return d.Snap.HostByID(d.Trigger.HostIDs[idx-1])
}

// item is the trigger's idx-th item. Zabbix numbers items in their order
// of appearance in the expression; the catalog keeps them by ID, which is
// the same order for expressions written item by item as created.
func (d *MacroData) item(idx int) *catalog.Item {
	if d.Trigger == nil || d.Snap == nil || idx > len(d.Trigger.ItemIDs) {
		return nil
	}
	return d.Snap.Item(d.Trigger.ItemIDs[idx-1])
}
