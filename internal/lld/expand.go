package lld

import (
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// macroLen returns the length of the LLD macro ({#NAME}, NAME of
// A-Z, 0-9, "_" and ".") at the start of s, 0 if there is none.
func macroLen(s string) int {
	if len(s) < 4 || s[0] != '{' || s[1] != '#' {
		return 0
	}
	for i := 2; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '}':
			if i == 2 {
				return 0
			}
			return i + 1
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '.':
		default:
			return 0
		}
	}
	return 0
}

// subst replaces the row's LLD macros in s; unknown macros stay.
func subst(s string, row *Row) string {
	i := strings.Index(s, "{#")
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		if n := macroLen(s[i:]); n > 0 {
			if v, ok := row.Macros[s[i:i+n]]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+n])
			}
			i += n
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// substKey replaces LLD macros in an item key as Zabbix does: inside a
// quoted parameter the value's quotes are escaped; an unquoted
// parameter whose value needs quoting (a comma, bracket, quote or
// leading space) is quoted.
func substKey(key string, row *Row) string {
	if !strings.Contains(key, "{#") {
		return key
	}
	var b strings.Builder
	quoted, depth := false, 0
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c == '{' && i+1 < len(key) && key[i+1] == '#' {
			if n := macroLen(key[i:]); n > 0 {
				m := key[i : i+n]
				v, ok := row.Macros[m]
				switch {
				case !ok:
					b.WriteString(m)
				case depth == 0:
					b.WriteString(v)
				case quoted:
					b.WriteString(strings.ReplaceAll(v, `"`, `\"`))
				case strings.ContainsAny(v, `,]"`) || strings.HasPrefix(v, " "):
					b.WriteString(`"` + strings.ReplaceAll(v, `"`, `\"`) + `"`)
				default:
					b.WriteString(v)
				}
				i += n - 1
				continue
			}
		}
		switch {
		case quoted && c == '\\' && i+1 < len(key) && key[i+1] == '"':
			b.WriteByte(c)
			i++
			c = key[i]
		case c == '"' && depth > 0:
			quoted = !quoted
		case !quoted && c == '[':
			depth++
		case !quoted && c == ']':
			depth--
		}
		b.WriteByte(c)
	}
	return b.String()
}

// substExpr replaces LLD macros in a trigger expression: in item
// references (/host/key) as in keys, elsewhere as text.
func substExpr(expr string, row *Row) string {
	if !strings.Contains(expr, "{#") {
		return expr
	}
	var b strings.Builder
	for {
		i := strings.Index(expr, "(/")
		if i < 0 {
			b.WriteString(subst(expr, row))
			return b.String()
		}
		b.WriteString(subst(expr[:i+2], row))
		rest := expr[i+2:]
		j := strings.IndexByte(rest, '/')
		if j < 0 {
			b.WriteString(subst(rest, row))
			return b.String()
		}
		b.WriteString(rest[:j+1])
		rest = rest[j+1:]
		end := keyEnd(rest)
		b.WriteString(substKey(rest[:end], row))
		expr = rest[end:]
	}
}

// keyEnd returns where an item key that starts s ends: at the ')' or
// ',' after it outside brackets and quotes.
func keyEnd(s string) int {
	quoted, depth := false, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '\\':
			i++
		case c == '"' && depth > 0:
			quoted = !quoted
		case quoted:
		case c == '[':
			depth++
		case c == ']':
			depth--
		case depth == 0 && (c == ',' || c == ')'):
			return i
		}
	}
	return len(s)
}

// opMatches reports whether an override operation selects a prototype
// of the name.
func (m *matcher) opMatches(op *catalog.LLDOperation, name string) bool {
	switch op.Operator {
	case catalog.OpCondNotEquals:
		return name != op.Value
	case catalog.OpCondContains:
		return strings.Contains(name, op.Value)
	case catalog.OpCondNotContains:
		return !strings.Contains(name, op.Value)
	case catalog.OpCondMatches:
		return m.match(op.Value, name)
	case catalog.OpCondNotMatches:
		return !m.match(op.Value, name)
	}
	return name == op.Value
}

// itemOverride is what the overrides set on one item prototype for one
// row.
type itemOverride struct {
	status, discover       *int
	delay, history, trends *string
	tags                   []catalog.Tag
}

type triggerOverride struct {
	status, discover, severity *int
	tags                       []catalog.Tag
}

// overrides applies the rule's overrides to one row: per item and
// trigger prototype (by index), what they set.
func (m *matcher) overrides(l *catalog.LLDRule, row *Row, exp expander) (map[int]*itemOverride, map[int]*triggerOverride) {
	var io map[int]*itemOverride
	var to map[int]*triggerOverride
	for oi := range l.Overrides {
		o := &l.Overrides[oi]
		if !m.pass(&o.Filter, row, exp) {
			continue
		}
		for pi := range o.Operations {
			op := &o.Operations[pi]
			switch op.Object {
			case catalog.OpObjectItem:
				for i := range l.ItemPrototypes {
					if !m.opMatches(op, l.ItemPrototypes[i].Item.Name) {
						continue
					}
					if io == nil {
						io = map[int]*itemOverride{}
					}
					x := io[i]
					if x == nil {
						x = &itemOverride{}
						io[i] = x
					}
					x.status, x.discover = pick(op.Status, x.status), pick(op.Discover, x.discover)
					x.delay, x.history, x.trends = pick(op.Delay, x.delay), pick(op.History, x.history), pick(op.Trends, x.trends)
					x.tags = append(x.tags, op.Tags...)
				}
			case catalog.OpObjectTrigger:
				for i := range l.TriggerPrototypes {
					if !m.opMatches(op, l.TriggerPrototypes[i].Fields.Description) {
						continue
					}
					if to == nil {
						to = map[int]*triggerOverride{}
					}
					x := to[i]
					if x == nil {
						x = &triggerOverride{}
						to[i] = x
					}
					x.status, x.discover, x.severity = pick(op.Status, x.status), pick(op.Discover, x.discover), pick(op.Severity, x.severity)
					x.tags = append(x.tags, op.Tags...)
				}
			}
		}
		if o.Stop == 1 {
			break
		}
	}
	return io, to
}

func pick[T any](v, old *T) *T {
	if v != nil {
		return v
	}
	return old
}

// Expand computes what a rule's rows want on its host: the rows that
// pass the filter, each prototype expanded for each, overrides applied.
// hostName is the rule's host's technical name (trigger expressions
// name it).
func Expand(snap *catalog.Snapshot, rule *catalog.Item, rows []Row, exp expander) (items []catalog.DiscoveredItem, trigs []catalog.DiscoveredTrigger) {
	l := rule.Ext().LLD
	m := &matcher{snap: snap}
	if exp == nil {
		exp = func(s string) string { return s }
	}
	seenItem := map[string]uint64{} // key → the prototype that made it
	seenTrig := map[string]bool{}
	for ri := range rows {
		row := &rows[ri]
		if !m.pass(&l.Filter, row, exp) {
			continue
		}
		io, to := m.overrides(l, row, exp)
		made := map[string]bool{} // prototype keys expanded for this row that will exist
		for pi := range l.ItemPrototypes {
			p := &l.ItemPrototypes[pi]
			o := io[pi]
			if p.Discover == 1 && (o == nil || o.discover == nil) || o != nil && o.discover != nil && *o.discover == 1 {
				continue
			}
			is := expandItem(&p.Item, row)
			if o != nil {
				if o.status != nil {
					is.Status = map[int]string{0: "enabled", 1: "disabled"}[*o.status]
				}
				if o.delay != nil {
					is.Delay = *o.delay
				}
				if o.history != nil {
					is.History = *o.history
				}
				if o.trends != nil {
					is.Trends = *o.trends
				}
				for _, t := range o.tags {
					is.Tags = append(is.Tags, catalog.TagSpec{Tag: subst(t.Tag, row), Value: subst(t.Value, row)})
				}
			}
			made[p.Item.Key] = true
			if pid, ok := seenItem[is.Key]; ok && pid == p.ID {
				continue // two rows giving one key: the first wins, as in Zabbix
			} else if !ok {
				seenItem[is.Key] = p.ID
			}
			// Another prototype's key: passed on, the catalog reports
			// the collision on the rule.
			items = append(items, catalog.DiscoveredItem{ProtoID: p.ID, Item: is, MasterKey: substKey(p.MasterKey, row), ValueMap: p.ValueMap})
		}
		for ti := range l.TriggerPrototypes {
			tp := &l.TriggerPrototypes[ti]
			o := to[ti]
			if tp.Discover == 1 && (o == nil || o.discover == nil) || o != nil && o.discover != nil && *o.discover == 1 {
				continue
			}
			if !protoItemsMade(tp.Fields.Expression, l, made) || !protoItemsMade(tp.Fields.RecoveryExpression, l, made) {
				continue
			}
			f := tp.Fields
			f.UUID = ""
			f.Description = subst(f.Description, row)
			f.EventName = subst(f.EventName, row)
			f.Expression = substExpr(f.Expression, row)
			f.RecoveryExpression = substExpr(f.RecoveryExpression, row)
			f.Opdata, f.Comments, f.URL = subst(f.Opdata, row), subst(f.Comments, row), subst(f.URL, row)
			f.CorrelationTag = subst(f.CorrelationTag, row)
			f.Tags = nil
			for _, t := range tp.Fields.Tags {
				f.Tags = append(f.Tags, catalog.Tag{Tag: subst(t.Tag, row), Value: subst(t.Value, row)})
			}
			f.Dependencies = nil
			if o != nil {
				if o.status != nil {
					f.Enabled = *o.status == 0
				}
				if o.severity != nil {
					f.Priority = uint8(*o.severity)
				}
				for _, t := range o.tags {
					f.Tags = append(f.Tags, catalog.Tag{Tag: subst(t.Tag, row), Value: subst(t.Value, row)})
				}
			}
			k := f.Description + "\x00" + f.Expression
			if seenTrig[k] {
				continue
			}
			seenTrig[k] = true
			trigs = append(trigs, catalog.DiscoveredTrigger{ProtoID: tp.ID, Fields: f})
		}
	}
	return items, trigs
}

// protoItemsMade reports whether every item prototype an expression
// references (by its unexpanded key) is made for the row: a trigger
// prototype over a prototype the overrides or discover flag left out is
// not created.
func protoItemsMade(expr string, l *catalog.LLDRule, made map[string]bool) bool {
	for i := range l.ItemPrototypes {
		k := l.ItemPrototypes[i].Item.Key
		if !made[k] && strings.Contains(expr, "/"+k+")") || !made[k] && strings.Contains(expr, "/"+k+",") {
			return false
		}
	}
	return true
}

// expandItem expands an item prototype's fields for a row.
func expandItem(p *catalog.ItemSpec, row *Row) catalog.ItemSpec {
	is := *p
	is.Key = substKey(p.Key, row)
	is.Name = subst(p.Name, row)
	is.Units = subst(p.Units, row)
	is.Delay, is.History, is.Trends = subst(p.Delay, row), subst(p.History, row), subst(p.Trends, row)
	is.Description = subst(p.Description, row)
	is.SNMPOID = subst(p.SNMPOID, row)
	is.Params = subst(p.Params, row)
	is.Timeout = subst(p.Timeout, row)
	is.IPMISensor = subst(p.IPMISensor, row)
	is.JMXEndpoint = subst(p.JMXEndpoint, row)
	is.URL = subst(p.URL, row)
	is.Posts = subst(p.Posts, row)
	is.Tags = nil
	for _, t := range p.Tags {
		is.Tags = append(is.Tags, catalog.TagSpec{Tag: subst(t.Tag, row), Value: subst(t.Value, row)})
	}
	if len(p.Preprocessing) > 0 {
		is.Preprocessing = make([]catalog.PreprocSpec, len(p.Preprocessing))
		for i, s := range p.Preprocessing {
			s.Parameters = append([]string(nil), s.Parameters...)
			for j := range s.Parameters {
				s.Parameters[j] = subst(s.Parameters[j], row)
			}
			s.ErrorHandlerParams = subst(s.ErrorHandlerParams, row)
			is.Preprocessing[i] = s
		}
	}
	return is
}
