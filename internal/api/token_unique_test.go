package api

import (
	"fmt"
	"testing"
)

// TestTokenNameUnique: a user's token names are unique, on create and on
// update, checked against the stored tokens and within the request
// before anything is written. Every error was recorded from 6.0.14
// (code -32602, "Invalid params.").
func TestTokenNameUnique(t *testing.T) {
	f := newPermFixture(t)
	var tok struct{ TokenIDs []string }
	f.mustDo(f.root, "token.create", `{"name":"dup-a"}`, &tok)
	a := tok.TokenIDs[0]
	f.mustDo(f.root, "token.create", `{"name":"dup-b"}`, &tok)
	b := tok.TokenIDs[0]
	f.mustDo(f.root, "token.create", `{"name":"dup-e"}`, &tok)
	third := tok.TokenIDs[0]
	root := f.userID("Admin")
	exists := func(name string) string {
		return fmt.Sprintf(`API token "%s" already exists for userid "%d".`, name, root)
	}
	for _, c := range []struct{ method, params, want string }{
		{"token.create", `{"name":"dup-a"}`, exists("dup-a")},
		{"token.create", fmt.Sprintf(`{"name":"dup-a","userid":"%d"}`, root), exists("dup-a")},
		{"token.create", `[{"name":"dup-c"},{"name":"dup-c"}]`,
			fmt.Sprintf(`Invalid parameter "/2": value (userid, name)=(%d, dup-c) already exists.`, root)},
		{"token.create", `[{"name":"dup-d"},{"name":"dup-a"}]`, exists("dup-a")},
		{"token.update", `{"tokenid":"` + b + `","name":"dup-a"}`, exists("dup-a")},
		{"token.update", `[{"tokenid":"` + a + `","name":"dup-x"},{"tokenid":"` + third + `","description":"d"},{"tokenid":"` + b + `","name":"dup-x"}]`,
			fmt.Sprintf(`Invalid parameter "/3": value (userid, name)=(%d, dup-x) already exists.`, root)},
		// A swap is refused too: names are checked against the stored
		// ones, and the older token's is named.
		{"token.update", `[{"tokenid":"` + a + `","name":"dup-b"},{"tokenid":"` + b + `","name":"dup-a"}]`, exists("dup-a")},
		{"token.update", `[{"tokenid":"` + b + `","name":"dup-a"},{"tokenid":"` + a + `","name":"dup-b"}]`, exists("dup-a")},
		{"token.update", `{"tokenid":"` + a + `","name":"dup-a"}`, ""},
	} {
		_, e := f.do(f.root, c.method, c.params)
		switch {
		case c.want == "" && e != nil:
			t.Errorf("%s %s: %+v, want a result", c.method, c.params, e)
		case c.want != "" && (e == nil || e.Code != -32602 || e.Data != c.want):
			t.Errorf("%s %s: %+v, want -32602 %q", c.method, c.params, e, c.want)
		}
	}
	got := f.names(f.root, "token.get", `{"output":["name"],"sortfield":"name"}`, "name")
	if got != "dup-a,dup-b,dup-e" {
		t.Errorf("tokens after the refused calls: %q, want dup-a,dup-b,dup-e (nothing half-written)", got)
	}
}
