package trigger

import (
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/usermacro"
)

// MacroContext is what a macro in an event's name, operational data or
// tag value may refer to.
type MacroContext struct {
	Trigger  *catalog.Trigger
	Snapshot *catalog.Snapshot
	// Result is the evaluation that made the event; nil for OK events
	// made by a manual close.
	Result *Result
	// Host, if not 0, is the host of the item or host whose tags are
	// expanded (tags.go): {HOST.*} and user macros are that host's, and
	// {ITEM.*} macros are left as written, as Zabbix 6.0 expands item
	// and host tags.
	Host uint64
}

// Resolver expands macros in text. Implementations must be safe for
// concurrent use and must leave macros they do not know as written, as
// Zabbix does.
type Resolver interface {
	Expand(text string, mc *MacroContext) string
}

// MacroResolver expands the macros Zabbix offers in trigger names, event
// tags and operational data:
//
//   - {HOST.HOST}, {HOST.NAME}, {HOSTNAME} (the first host; {HOST.HOST2}
//     the second, in ascending host ID order),
//   - {TRIGGER.ID}, {TRIGGER.NAME} (unexpanded), {TRIGGER.SEVERITY}
//     (Zabbix's English names), {TRIGGER.EXPRESSION},
//   - {ITEM.VALUE}, {ITEM.LASTVALUE} and their indexed forms
//     {ITEM.VALUE2} (the value of the expression's Nth item at
//     evaluation; "*UNKNOWN*" if there is none, as in Zabbix),
//   - user macros {$NAME}, {$NAME:context}: through UserMacro if set,
//     else the snapshot's scope of the trigger's first host
//     (catalog.Snapshot.UserMacros: host, templates, global); secret
//     macros show as usermacro.Mask, never their value, since names,
//     tags and operational data are shown to every user who sees the
//     problem.
type MacroResolver struct {
	// UserMacro resolves a user macro ("{$NAME}") for a host, host first
	// then global, reporting whether it is defined. Tests set it.
	UserMacro func(hostID uint64, macro string) (string, bool)
}

var severityNames = [...]string{"Not classified", "Information", "Warning", "Average", "High", "Disaster"}

// Expand implements Resolver.
func (r MacroResolver) Expand(text string, mc *MacroContext) string {
	if !strings.Contains(text, "{") {
		return text
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(text, '{')
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		j := strings.IndexByte(text[i:], '}')
		if j < 0 {
			b.WriteString(text)
			return b.String()
		}
		if strings.HasPrefix(text[i:], "{$") {
			// A user macro's quoted context may hold '}'.
			if _, n, err := usermacro.ScanRef(text[i:]); err == nil {
				j = n - 1
			}
		}
		b.WriteString(text[:i])
		m := text[i : i+j+1]
		if v, ok := r.macro(m, mc); ok {
			b.WriteString(v)
		} else {
			b.WriteString(m)
		}
		text = text[i+j+1:]
	}
}

// macro resolves one macro, "{...}" included.
func (r MacroResolver) macro(m string, mc *MacroContext) (string, bool) {
	t := mc.Trigger
	hostIDs := t.HostIDs
	if mc.Host != 0 {
		hostIDs = []uint64{mc.Host}
	}
	if strings.HasPrefix(m, "{$") {
		if len(hostIDs) == 0 {
			return "", false
		}
		if r.UserMacro != nil {
			return r.UserMacro(hostIDs[0], m)
		}
		if mc.Snapshot == nil {
			return "", false
		}
		ref, err := usermacro.ParseRef(m)
		if err != nil {
			return "", false
		}
		d, ok := mc.Snapshot.UserMacros(hostIDs[0]).Resolve(ref)
		if !ok {
			return "", false
		}
		if d.Type != usermacro.Text {
			return usermacro.Mask, true
		}
		return d.Value, true
	}
	name, idx := m[1:len(m)-1], 1
	if n := len(name); n > 0 && name[n-1] >= '1' && name[n-1] <= '9' {
		idx, name = int(name[n-1]-'0'), name[:n-1]
	}
	switch name {
	case "TRIGGER.ID":
		return strconv.FormatUint(t.ID, 10), true
	case "TRIGGER.NAME":
		return t.Description, true
	case "TRIGGER.EXPRESSION":
		return t.Expression, true
	case "TRIGGER.SEVERITY":
		if int(t.Priority) < len(severityNames) {
			return severityNames[t.Priority], true
		}
	case "HOST.HOST", "HOSTNAME", "HOST.NAME":
		if idx > len(hostIDs) || mc.Snapshot == nil {
			return "", false
		}
		h := mc.Snapshot.HostByID(hostIDs[idx-1])
		if h == nil {
			return "", false
		}
		if name == "HOST.NAME" {
			return h.Name, true
		}
		return h.Host, true
	case "ITEM.VALUE", "ITEM.LASTVALUE":
		if mc.Host != 0 {
			return "", false
		}
		if mc.Result == nil || idx > len(mc.Result.ItemValues) {
			return "*UNKNOWN*", true
		}
		return mc.Result.ItemValues[idx-1], true
	}
	return "", false
}
