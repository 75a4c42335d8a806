package auth

import (
	"context"
	"testing"
)

// BenchmarkAuthenticate measures the per-request cost of a cache hit,
// the API's hot path. Compare runs with benchstat:
//
//	go test -run '^$' -bench Authenticate -benchmem -count 6 ./internal/auth/
func BenchmarkAuthenticate(b *testing.B) {
	e := openEnv(b, nil)
	ctx := context.Background()
	u := mustCreateUser(b, e.s, "grafana", "s3cret-password", RoleUser)
	sid := mustLogin(b, e.s, "grafana", "s3cret-password")
	tok, err := e.s.CreateToken(ctx, u.ID, "t", "", 0)
	if err != nil {
		b.Fatal(err)
	}
	secret, err := e.s.GenerateToken(ctx, tok.ID)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, secret string }{{"kind=session", sid}, {"kind=token", secret}} {
		b.Run(c.name+"/par=1", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.s.Authenticate(ctx, c.secret); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/par=gomaxprocs", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := e.s.Authenticate(ctx, c.secret); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkLoginDefaultParams shows what one successful login costs with
// the production argon2id parameters (64 MiB, t=2, p=1).
//
//	go test -run '^$' -bench LoginDefault -benchmem -count 6 ./internal/auth/
func BenchmarkLoginDefaultParams(b *testing.B) {
	e := openEnv(b, func(o *Options) { o.HashParams = DefaultHashParams() })
	mustCreateUser(b, e.s, "alice", "s3cret-password", RoleUser)
	b.ReportAllocs()
	for b.Loop() {
		mustLogin(b, e.s, "alice", "s3cret-password")
	}
}
