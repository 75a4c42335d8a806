package usermacro

import "testing"

func def(t *testing.T, macro, value string, typ Type) Def {
	t.Helper()
	r, err := CheckDefinition(macro)
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDef(r, value, typ)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestScopeOrder checks Zabbix's resolution order: host, templates by
// level, global; exact context, then regex context, then no context,
// each over all levels.
func TestScopeOrder(t *testing.T) {
	host := []Def{def(t, "{$A}", "host", Text), def(t, "{$C:db}", "host-db", Text)}
	tmpl1 := []Def{def(t, "{$A}", "tmpl1", Text), def(t, "{$B}", "tmpl1", Text), def(t, `{$C:regex:"^d"}`, "tmpl1-re", Text)}
	tmpl2 := []Def{def(t, "{$B}", "tmpl2", Text), def(t, "{$D}", "tmpl2", Text), def(t, `{$C:regex:"^w"}`, "tmpl2-re", Text)}
	global := []Def{def(t, "{$A}", "global", Text), def(t, "{$C}", "global-default", Text), def(t, "{$E}", "global", Text),
		def(t, "{$C:web}", "global-web", Text), def(t, "{$S}", "hidden", Secret)}
	s := NewScope(NewLevel(host), NewLevel(tmpl1), nil, NewLevel(tmpl2), NewLevel(global))
	for _, c := range []struct {
		name, ctx string
		want      string
		ok        bool
	}{
		{"A", "", "host", true},
		{"B", "", "tmpl1", true}, // first-level template before second-level
		{"D", "", "tmpl2", true},
		{"E", "", "global", true},
		{"C", "db", "host-db", true},
		{"C", "web", "global-web", true}, // exact context anywhere beats a regex on a more specific level
		{"C", "dx", "tmpl1-re", true},
		{"C", "www", "tmpl2-re", true},
		{"C", "other", "global-default", true}, // the macro without context
		{"C", "", "global-default", true},
		{"A", "any", "host", true},
		{"S", "", "hidden", true},
		{"X", "", "", false},
		{"X", "ctx", "", false},
	} {
		got, ok := s.UserMacro(c.name, c.ctx)
		if got != c.want || ok != c.ok {
			t.Errorf("UserMacro(%q, %q) = %q, %v; want %q, %v", c.name, c.ctx, got, ok, c.want, c.ok)
		}
	}
	var nilScope *Scope
	if _, ok := nilScope.UserMacro("A", ""); ok {
		t.Error("nil scope resolved a macro")
	}
}

func TestExpand(t *testing.T) {
	s := NewScope(NewLevel([]Def{def(t, "{$PORT}", "8080", Text), def(t, "{$PW}", "s3cr3t", Secret), def(t, "{$T:/tmp}", "5", Text)}))
	for _, c := range []struct{ in, want, masked string }{
		{"http://h:{$PORT}/x", "http://h:8080/x", "http://h:8080/x"},
		{"pw={$PW}", "pw=s3cr3t", "pw=" + Mask},
		{`{$T:"/tmp"} {$T:/tmp} {$T:/var}`, "5 5 {$T:/var}", "5 5 {$T:/var}"},
		{"{$UNDEF} {$ {$PORT", "{$UNDEF} {$ {$PORT", "{$UNDEF} {$ {$PORT"},
		{"no macros", "no macros", "no macros"},
	} {
		if got := s.Expand(c.in); got != c.want {
			t.Errorf("Expand(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := s.Masked(c.in); got != c.masked {
			t.Errorf("Masked(%q) = %q, want %q", c.in, got, c.masked)
		}
	}
}
