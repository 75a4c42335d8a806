package usermacro

import (
	"fmt"
	"testing"
)

// BenchmarkScope measures resolution on the trigger evaluation path: a
// host with 20 macros, two template levels of 50 and 200 global ones
// (the official templates define up to about 60 per template).
//
//	go test -run '^$' -bench Scope -benchtime 200ms -count 6 ./internal/usermacro/
func BenchmarkScope(b *testing.B) {
	level := func(prefix string, n int) []Def {
		out := make([]Def, n)
		for i := range out {
			r, _ := ParseRef(fmt.Sprintf("{$%s.%d}", prefix, i))
			out[i], _ = NewDef(r, fmt.Sprint(i), Text)
		}
		return out
	}
	r, _ := ParseRef(`{$CTX:regex:"^/var"}`)
	re, _ := NewDef(r, "95", Text)
	tmpl := append(level("T", 50), re)
	s := NewScope(NewLevel(level("H", 20)), NewLevel(tmpl), NewLevel(level("T2", 50)), NewLevel(level("G", 200)))
	b.Run("kind=host", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := s.UserMacro("H.10", ""); !ok {
				b.Fatal("not found")
			}
		}
	})
	b.Run("kind=global", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := s.UserMacro("G.150", ""); !ok {
				b.Fatal("not found")
			}
		}
	})
	b.Run("kind=regex", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if v, _ := s.UserMacro("CTX", "/var/log"); v != "95" {
				b.Fatal("regex context not resolved")
			}
		}
	})
	b.Run("kind=expand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = s.Expand("CPU over {$T.10}% for {$H.3}m")
		}
	})
}
