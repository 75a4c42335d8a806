package usermacro

import (
	"fmt"
	"regexp"
	"strings"
)

// Type is Zabbix's macro type.
type Type uint8

// Macro types, Zabbix's numbers.
const (
	Text   Type = 0
	Secret Type = 1 // the value is never returned by the API nor shown
	Vault  Type = 2 // a path into a vault; Peregrine has no vault client
)

// ErrVault refuses vault macros: Peregrine reads no secret store.
var ErrVault = fmt.Errorf("vault secret macros (type 2) are not supported: store the value as a secret text macro (type 1)")

// CheckType validates a macro type number.
func CheckType(t int) (Type, error) {
	switch Type(t) {
	case Text, Secret:
		return Type(t), nil
	case Vault:
		return 0, ErrVault
	}
	return 0, fmt.Errorf("macro type must be 0 (text) or 1 (secret text), not %d", t)
}

// Mask is what shows instead of a secret value, as Zabbix's frontend
// shows it.
const Mask = "******"

// Def is one definition: a macro and its value.
type Def struct {
	Ref   Ref
	Value string
	Type  Type
	re    *regexp.Regexp // compiled Ref.Context of a regex definition
}

// NewDef makes a definition, compiling a regular expression context.
func NewDef(r Ref, value string, t Type) (Def, error) {
	d := Def{Ref: r, Value: value, Type: t}
	if r.Regex {
		re, err := compile(r.Context)
		if err != nil {
			return Def{}, err
		}
		d.re = re
	}
	return d, nil
}

func compile(pattern string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("%w: invalid regular expression context %q: %v", ErrSyntax, pattern, err)
	}
	return re, nil
}

// Level is the definitions of one owner (a host, a template, the global
// ones), indexed by macro name. Levels are shared by every Scope that
// includes them: a template linked to 100,000 hosts is one Level.
type Level struct {
	defs  []Def
	index map[string][]int32 // name → positions in defs, in order
}

// NewLevel makes a level of defs; the slice is kept, not copied.
func NewLevel(defs []Def) *Level {
	l := &Level{defs: defs, index: make(map[string][]int32, len(defs))}
	for i := range defs {
		n := defs[i].Ref.Name
		l.index[n] = append(l.index[n], int32(i))
	}
	return l
}

// Scope is the definitions a host sees, level by level: host, templates
// by depth (within a depth in the caller's order), global. The zero
// Scope and a nil *Scope define nothing.
type Scope struct {
	levels []*Level
}

// NewScope makes a scope of levels, most specific first; nil and empty
// levels are dropped.
func NewScope(levels ...*Level) *Scope {
	s := &Scope{}
	for _, l := range levels {
		if l != nil && len(l.defs) > 0 {
			s.levels = append(s.levels, l)
		}
	}
	return s
}

// Lookup resolves {$name} (context "" and hasContext false) or
// {$name:context} and returns the definition used. It does not allocate;
// its cost grows with the definitions of that name, not of the scope.
func (s *Scope) Lookup(name string, hasContext bool, context string) (*Def, bool) {
	if s == nil {
		return nil, false
	}
	if hasContext {
		for _, l := range s.levels {
			for _, i := range l.index[name] {
				d := &l.defs[i]
				if d.Ref.HasContext && !d.Ref.Regex && d.Ref.Context == context {
					return d, true
				}
			}
		}
		for _, l := range s.levels {
			for _, i := range l.index[name] {
				d := &l.defs[i]
				if d.re != nil && d.re.MatchString(context) {
					return d, true
				}
			}
		}
	}
	for _, l := range s.levels {
		for _, i := range l.index[name] {
			d := &l.defs[i]
			if !d.Ref.HasContext {
				return d, true
			}
		}
	}
	return nil, false
}

// UserMacro returns the value of {$name} or, for a non-empty context,
// {$name:context}. It implements expr.Macros.
func (s *Scope) UserMacro(name, context string) (string, bool) {
	d, ok := s.Lookup(name, context != "", context)
	if !ok {
		return "", false
	}
	return d.Value, true
}

// Resolve resolves a reference.
func (s *Scope) Resolve(r Ref) (*Def, bool) { return s.Lookup(r.Name, r.HasContext, r.Context) }

// Expand replaces every user macro in text by its value; undefined or
// malformed ones stay as written.
func (s *Scope) Expand(text string) string { return s.expand(text, false) }

// Masked is Expand with secret values replaced by Mask: for texts users
// read (event names, tags, operational data).
func (s *Scope) Masked(text string) string { return s.expand(text, true) }

func (s *Scope) expand(text string, mask bool) string {
	if s == nil || !strings.Contains(text, "{$") {
		return text
	}
	var b strings.Builder
	for {
		i := strings.Index(text, "{$")
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		b.WriteString(text[:i])
		r, n, err := ScanRef(text[i:])
		if err != nil {
			b.WriteString("{$")
			text = text[i+2:]
			continue
		}
		if d, ok := s.Resolve(r); ok {
			if mask && d.Type != Text {
				b.WriteString(Mask)
			} else {
				b.WriteString(d.Value)
			}
		} else {
			b.WriteString(text[i : i+n])
		}
		text = text[i+n:]
	}
}
