package expr

import "regexp"

// MacroDef is one user macro definition: {$NAME}, {$NAME:"context"} or
// {$NAME:regex:"pattern"}.
type MacroDef struct {
	Name    string
	Context string // "" for the macro without context
	Regex   bool   // Context is a regular expression
	Value   string
}

// MacroLevels resolves user macros over definition levels in Zabbix's
// order: the host first, then its templates by depth, then global. It
// implements Macros.
//
// A macro used with a context is resolved, in order: a definition with
// exactly that context (most specific level first), then one whose
// regular expression matches the context, then the macro without context.
type MacroLevels [][]MacroDef

// UserMacro implements Macros.
func (ls MacroLevels) UserMacro(name, context string) (string, bool) {
	if context != "" {
		for _, level := range ls {
			for _, d := range level {
				if d.Name == name && !d.Regex && d.Context == context {
					return d.Value, true
				}
			}
		}
		for _, level := range ls {
			for _, d := range level {
				if d.Name == name && d.Regex {
					if re, err := regexp.Compile(d.Context); err == nil && re.MatchString(context) {
						return d.Value, true
					}
				}
			}
		}
	}
	for _, level := range ls {
		for _, d := range level {
			if d.Name == name && d.Context == "" && !d.Regex {
				return d.Value, true
			}
		}
	}
	return "", false
}
