package auth

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHashRoundTrip(t *testing.T) {
	ctx := context.Background()
	h := newHasher(testHashParams, 2)
	a, err := h.hash(ctx, "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.hash(ctx, "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Fatalf("two hashes of one password are equal (%s): salt not random", a)
	}
	if !strings.HasPrefix(a, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("hash %q does not have the PHC argon2id prefix", a)
	}
	if strings.Contains(a, "correct horse") {
		t.Fatal("hash contains the password")
	}
	for _, stored := range []string{a, b} {
		ph, err := parseHash(stored)
		if err != nil {
			t.Fatalf("parseHash(%q): %v", stored, err)
		}
		if len(ph.salt) != hashSaltLen || len(ph.key) != hashKeyLen || ph.params != testHashParams {
			t.Fatalf("parseHash(%q) = %+v", stored, ph)
		}
		if got := ph.String(); got != stored {
			t.Fatalf("re-encoded %q as %q", stored, got)
		}
		ok, stale, err := h.verify(ctx, stored, "correct horse")
		if err != nil || !ok || stale {
			t.Fatalf("verify(right) = %v, %v, %v", ok, stale, err)
		}
		ok, _, err = h.verify(ctx, stored, "correct horsf")
		if err != nil || ok {
			t.Fatalf("verify(wrong) = %v, %v", ok, err)
		}
	}
}

func TestHashStaleParams(t *testing.T) {
	ctx := context.Background()
	old := newHasher(HashParams{Memory: 32, Time: 1, Threads: 1}, 1)
	stored, err := old.hash(ctx, "password1")
	if err != nil {
		t.Fatal(err)
	}
	cur := newHasher(testHashParams, 1)
	ok, stale, err := cur.verify(ctx, stored, "password1")
	if err != nil || !ok || !stale {
		t.Fatalf("verify with other parameters = %v, %v, %v; want true, true, nil", ok, stale, err)
	}
}

// TestHashKnownVector checks interoperability with the argon2 reference
// implementation: the string below is what libargon2's
// argon2id_hash_encoded(t=2, m=64, p=1, "password", salt
// "somesaltsomesalt", 32-byte key) returns.
func TestHashKnownVector(t *testing.T) {
	const stored = "$argon2id$v=19$m=64,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$Gpj7qOY5RCXJvcMzqcdQqvgR3wcPX7SleI4c9NtXk6E"
	ph, err := parseHash(stored)
	if err != nil {
		t.Fatal(err)
	}
	if string(ph.salt) != "somesaltsomesalt" || ph.params != (HashParams{Memory: 64, Time: 2, Threads: 1}) {
		t.Fatalf("parseHash = %+v", ph)
	}
	if ph.String() != stored {
		t.Fatalf("re-encoded as %q", ph.String())
	}
	h := newHasher(testHashParams, 1)
	for _, c := range []struct {
		pw   string
		want bool
	}{{"password", true}, {"Password", false}, {"", false}} {
		ok, stale, err := h.verify(context.Background(), stored, c.pw)
		if err != nil || ok != c.want || !stale {
			t.Errorf("verify(%q) = %v, %v, %v; want %v, true, nil", c.pw, ok, stale, err, c.want)
		}
	}
}

func TestParseHashErrors(t *testing.T) {
	good := "$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHRzb21lc2FsdA$" + strings.Repeat("A", 43)
	if _, err := parseHash(good); err != nil {
		t.Fatalf("parseHash(good): %v", err)
	}
	f := func(s string) {
		t.Helper()
		if ph, err := parseHash(s); err == nil {
			t.Errorf("parseHash(%q) = %+v, want an error", s, ph)
		} else if strings.Contains(err.Error(), s) && s != "" {
			t.Errorf("parseHash(%q): error quotes the input: %v", s, err)
		}
	}
	f("")
	f("password")
	f("$argon2i$v=19$m=64,t=1,p=1$c29tZXNhbHRzb21lc2FsdA$" + strings.Repeat("A", 43))
	f("$argon2id$v=16$m=64,t=1,p=1$c29tZXNhbHRzb21lc2FsdA$" + strings.Repeat("A", 43))
	f("$argon2id$v=19$t=1,m=64,p=1$c29tZXNhbHRzb21lc2FsdA$" + strings.Repeat("A", 43))
	f("$argon2id$v=19$m=064,t=1,p=1$c29tZXNhbHRzb21lc2FsdA$" + strings.Repeat("A", 43))
	f("$argon2id$v=19$m=+64,t=1,p=1$c29tZXNhbHRzb21lc2FsdA$" + strings.Repeat("A", 43))
	f("$argon2id$v=19$m=64,t=0,p=1$c29tZXNhbHRzb21lc2FsdA$" + strings.Repeat("A", 43))
	f("$argon2id$v=19$m=64,t=1,p=0$c29tZXNhbHRzb21lc2FsdA$" + strings.Repeat("A", 43))
	f("$argon2id$v=19$m=4,t=1,p=1$c29tZXNhbHRzb21lc2FsdA$" + strings.Repeat("A", 43))
	f("$argon2id$v=19$m=99999999999,t=1,p=1$c29tZXNhbHRzb21lc2FsdA$" + strings.Repeat("A", 43))
	f("$argon2id$v=19$m=4194304,t=1,p=1$c29tZXNhbHRzb21lc2FsdA$" + strings.Repeat("A", 43))
	f("$argon2id$v=19$m=64,t=1,p=1$c29tZQ$" + strings.Repeat("A", 43))                        // salt too short
	f("$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHRzb21lc2FsdA==$" + strings.Repeat("A", 43))      // padded
	f("$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHRzb21lc2FsdB$" + strings.Repeat("A", 43))        // trailing bits
	f("$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHRzb21lc2FsdA$" + strings.Repeat("A", 10))        // key too short
	f("$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHRzb21lc2FsdA$" + strings.Repeat("A", 43) + "$x") // extra field
	f("$argon2id$v=19$m=64,t=1,p=1,x=2$c29tZXNhbHRzb21lc2FsdA$" + strings.Repeat("A", 43))
}

func TestVerifyCorrupt(t *testing.T) {
	h := newHasher(testHashParams, 1)
	ok, _, err := h.verify(context.Background(), "not a hash", "password")
	if ok || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("verify(corrupt) = %v, %v; want false, ErrCorrupt", ok, err)
	}
}

func TestHashContextCancelled(t *testing.T) {
	h := newHasher(testHashParams, 1)
	h.sem <- struct{}{} // occupy the only slot
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.hash(ctx, "password"); !errors.Is(err, context.Canceled) {
		t.Fatalf("hash with a full semaphore and a cancelled context: %v", err)
	}
}

// FuzzParseHash checks that the parser never panics and that whatever it
// accepts encodes back to the same string (the format is canonical).
func FuzzParseHash(f *testing.F) {
	h := newHasher(testHashParams, 1)
	seed, err := h.hash(context.Background(), "password")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add("$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$" + strings.Repeat("A", 43))
	f.Add("$argon2id$v=19$m=64,t=1,p=1$$")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		ph, err := parseHash(s)
		if err != nil {
			return
		}
		if diff := cmp.Diff(s, ph.String()); diff != "" {
			t.Fatalf("parseHash(%q) does not round-trip (-in +out):\n%s", s, diff)
		}
		if ph.params.validate() != nil {
			t.Fatalf("parseHash(%q) accepted invalid parameters %+v", s, ph.params)
		}
	})
}
