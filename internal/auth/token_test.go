package auth

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestTokens(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	u := mustCreateUser(t, e.s, "grafana", "s3cret-password", RoleUser)
	created := e.clock.Now().Unix()

	tok, err := e.s.CreateToken(ctx, u.ID, "dashboards", "read-only Grafana", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := Token{ID: tok.ID, Name: "dashboards", UserID: u.ID, Description: "read-only Grafana", Status: TokenEnabled, CreatedAt: created}
	if diff := cmp.Diff(want, tok); diff != "" {
		t.Fatalf("CreateToken (-want +got):\n%s", diff)
	}
	if _, err := e.s.CreateToken(ctx, u.ID, "dashboards", "", 0); !errors.Is(err, ErrExists) {
		t.Fatalf("duplicate name: %v, want ErrExists", err)
	}
	if _, err := e.s.CreateToken(ctx, 999, "x", "", 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown user: %v, want ErrNotFound", err)
	}

	secret, err := e.s.GenerateToken(ctx, tok.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !isLowerHex(secret, 64) {
		t.Fatalf("secret %q is not 64 lowercase hex digits", secret)
	}
	e.clock.Advance(time.Hour) // tokens have no idle expiry
	if got, err := e.s.Authenticate(ctx, secret); err != nil || got != u {
		t.Fatalf("Authenticate(token) = %+v, %v; want %+v", got, err, u)
	}
	if _, err := e.s.Authenticate(ctx, strings.ToUpper(secret)); !errors.Is(err, ErrNotAuthorized) {
		t.Fatalf("upper-case secret: %v", err)
	}

	// The secret is stored only as its SHA-256.
	var stored string
	if err := e.s.db.QueryRow("SELECT token_hash FROM tokens WHERE id = ?", tok.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored == secret || strings.Contains(stored, secret) || stored != hashSecret(secret).String() {
		t.Fatalf("token_hash column = %q for secret %q; want only its SHA-256", stored, secret)
	}
	var n int
	if err := e.s.db.QueryRow("SELECT count(*) FROM tokens WHERE instr(name || description || coalesce(token_hash, ''), ?) > 0", secret).Scan(&n); err != nil || n != 0 {
		t.Fatalf("secret found in the tokens table (%d rows, %v)", n, err)
	}

	// LastAccess shows the use, even before it is written.
	toks, err := e.s.Tokens(ctx, u.ID)
	if err != nil || len(toks) != 1 || toks[0].LastAccess != e.clock.Now().Unix() {
		t.Fatalf("Tokens = %+v, %v; want LastAccess %d", toks, err, e.clock.Now().Unix())
	}

	// Regenerating replaces the secret at once.
	again, err := e.s.GenerateToken(ctx, tok.ID)
	if err != nil || again == secret {
		t.Fatalf("GenerateToken again = %q, %v", again, err)
	}
	if _, err := e.s.Authenticate(ctx, secret); !errors.Is(err, ErrNotAuthorized) {
		t.Fatalf("old secret after regenerate: %v, want ErrNotAuthorized", err)
	}
	if _, err := e.s.Authenticate(ctx, again); err != nil {
		t.Fatalf("new secret: %v", err)
	}

	// Disabled tokens are refused, and work again when enabled.
	if err := e.s.SetTokenStatus(ctx, tok.ID, TokenDisabled); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Authenticate(ctx, again); !errors.Is(err, ErrNotAuthorized) {
		t.Fatalf("disabled token: %v, want ErrNotAuthorized", err)
	}
	if err := e.s.SetTokenStatus(ctx, tok.ID, 7); !errors.Is(err, ErrInvalid) {
		t.Fatalf("status 7: %v", err)
	}
	if err := e.s.SetTokenStatus(ctx, tok.ID, TokenEnabled); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Authenticate(ctx, again); err != nil {
		t.Fatalf("re-enabled token: %v", err)
	}

	// Tokens survive a restart; Close wrote the last access.
	e.clock.Advance(10 * time.Second)
	if _, err := e.s.Authenticate(ctx, again); err != nil {
		t.Fatal(err)
	}
	e.reopen(t)
	toks, err = e.s.Tokens(ctx, 0)
	if err != nil || len(toks) != 1 || toks[0].LastAccess != e.clock.Now().Unix() {
		t.Fatalf("Tokens after restart = %+v, %v; want LastAccess %d", toks, err, e.clock.Now().Unix())
	}
	if _, err := e.s.Authenticate(ctx, again); err != nil {
		t.Fatalf("token after restart: %v", err)
	}

	if err := e.s.DeleteToken(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Authenticate(ctx, again); !errors.Is(err, ErrNotAuthorized) {
		t.Fatalf("deleted token: %v, want ErrNotAuthorized", err)
	}
	if err := e.s.DeleteToken(ctx, tok.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second DeleteToken: %v, want ErrNotFound", err)
	}
	if _, err := e.s.GenerateToken(ctx, tok.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GenerateToken of a deleted token: %v, want ErrNotFound", err)
	}
}

func TestTokenExpiry(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	u := mustCreateUser(t, e.s, "grafana", "s3cret-password", RoleUser)
	expires := e.clock.Now().Add(time.Hour).Unix()
	tok, err := e.s.CreateToken(ctx, u.ID, "short-lived", "", expires)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := e.s.GenerateToken(ctx, tok.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour - time.Second)
	if _, err := e.s.Authenticate(ctx, secret); err != nil {
		t.Fatalf("one second before expiry: %v", err)
	}
	e.clock.Advance(time.Second)
	if _, err := e.s.Authenticate(ctx, secret); !errors.Is(err, ErrNotAuthorized) {
		t.Fatalf("at expiry (cached): %v, want ErrNotAuthorized", err)
	}
	e.reopen(t)
	if _, err := e.s.Authenticate(ctx, secret); !errors.Is(err, ErrNotAuthorized) {
		t.Fatalf("at expiry (after restart): %v, want ErrNotAuthorized", err)
	}
}

func TestTokenWithoutSecret(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	u := mustCreateUser(t, e.s, "grafana", "s3cret-password", RoleUser)
	if _, err := e.s.CreateToken(ctx, u.ID, "never-generated", "", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Authenticate(ctx, strings.Repeat("0", 64)); !errors.Is(err, ErrNotAuthorized) {
		t.Fatalf("unknown token: %v", err)
	}
}

func TestCreateTokenValidation(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	u := mustCreateUser(t, e.s, "grafana", "s3cret-password", RoleUser)
	f := func(name, desc string, expires int64, want error) {
		t.Helper()
		_, err := e.s.CreateToken(ctx, u.ID, name, desc, expires)
		if !errors.Is(err, want) || (want == nil) != (err == nil) {
			t.Errorf("CreateToken(%.20q, %d bytes, %d): %v, want %v", name, len(desc), expires, err, want)
		}
	}
	f("ok", "", 0, nil)
	f(strings.Repeat("n", 64), "", 1, nil)
	f("", "", 0, ErrInvalid)
	f(strings.Repeat("n", 65), "", 0, ErrInvalid)
	f("tab\t", "", 0, ErrInvalid)
	f("neg", "", -1, ErrInvalid)
	f("big", strings.Repeat("d", 70000), 0, ErrInvalid)
	// Names are unique per user, not globally.
	v := mustCreateUser(t, e.s, "other", "s3cret-password", RoleUser)
	if _, err := e.s.CreateToken(ctx, v.ID, "ok", "", 0); err != nil {
		t.Errorf("same name for another user: %v", err)
	}
	all, err := e.s.Tokens(ctx, 0)
	if err != nil || len(all) != 3 {
		t.Errorf("Tokens(0) = %d tokens, %v; want 3", len(all), err)
	}
	mine, err := e.s.Tokens(ctx, v.ID)
	if err != nil || len(mine) != 1 || mine[0].UserID != v.ID {
		t.Errorf("Tokens(%d) = %+v, %v", v.ID, mine, err)
	}
}

// TestUpdateToken: token.update renames (unique per owner), describes,
// disables and sets the expiry of a token; a disabled or expired token
// stops authenticating at once, the cached one included.
func TestUpdateToken(t *testing.T) {
	e := openEnv(t, nil)
	ctx := context.Background()
	u := mustCreateUser(t, e.s, "grafana", "s3cret-password", RoleUser)
	tok, err := e.s.CreateToken(ctx, u.ID, "dash", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.CreateToken(ctx, u.ID, "other", "", 0); err != nil {
		t.Fatal(err)
	}
	secret, err := e.s.GenerateToken(ctx, tok.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	taken := "other"
	if err := e.s.UpdateToken(ctx, tok.ID, TokenChange{Name: &taken}); !errors.Is(err, ErrExists) {
		t.Fatalf("rename to a name the owner has: %v", err)
	}
	name, desc := "dashboards", "Grafana, read only"
	if err := e.s.UpdateToken(ctx, tok.ID, TokenChange{Name: &name, Description: &desc}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Authenticate(ctx, secret); err != nil {
		t.Fatalf("after a rename: %v", err)
	}
	off := TokenDisabled
	if err := e.s.UpdateToken(ctx, tok.ID, TokenChange{Status: &off}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Authenticate(ctx, secret); !errors.Is(err, ErrNotAuthorized) {
		t.Fatalf("disabled: %v", err)
	}
	on, past := TokenEnabled, e.clock.Now().Add(-time.Second).Unix()
	if err := e.s.UpdateToken(ctx, tok.ID, TokenChange{Status: &on, ExpiresAt: &past}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Authenticate(ctx, secret); !errors.Is(err, ErrNotAuthorized) {
		t.Fatalf("expired by an update: %v", err)
	}
	toks, err := e.s.Tokens(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range toks {
		if x.ID == tok.ID && (x.Name != name || x.Description != desc || x.Status != TokenEnabled || x.ExpiresAt != past) {
			t.Fatalf("stored token %+v", x)
		}
	}
	if err := e.s.UpdateToken(ctx, 999, TokenChange{Name: &taken}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown token: %v", err)
	}
}
