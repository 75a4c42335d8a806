package api

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParamsVocabulary checks the values get and write params share:
// what each accepts, and the type error (with the member's name) for
// what it refuses.
func TestParamsVocabulary(t *testing.T) {
	type params struct {
		ID    opt[uint64]   `json:"id"`
		IDs   opt[ids]      `json:"ids"`
		N     opt[int64]    `json:"n"`
		Names opt[[]string] `json:"Names"`
	}
	ok := func(in string, want params) {
		t.Helper()
		var got []params
		if err := decodeObjects(json.RawMessage(in), &got); err != nil {
			t.Errorf("%s: %v", in, err)
			return
		}
		if d := cmp.Diff(want, got[0]); d != "" {
			t.Errorf("%s (-want +got):\n%s", in, d)
		}
	}
	ok(`{"id":7,"ids":7,"n":-3}`, params{ID: given[uint64](7), IDs: given(ids{7}), N: given[int64](-3)})
	ok(`{"id":"7","ids":["1",2],"n":"12"}`, params{ID: given[uint64](7), IDs: given(ids{1, 2}), N: given[int64](12)})
	ok(`{"id":18446744073709551615,"ids":[]}`, params{ID: given[uint64](18446744073709551615), IDs: given(ids{})})
	ok(`{"ids":null,"n":null}`, params{IDs: opt[ids]{Set: true, Null: true}, N: opt[int64]{Set: true, Null: true}}) // null: absent
	ok(`{"Names":"a"}`, params{Names: given([]string{"a"})})

	bad := func(in, field, want string) {
		t.Helper()
		var got []params
		err := decodeObjects(json.RawMessage(in), &got)
		if e, ok := err.(*Error); !ok || e.Data != `Invalid parameter "/1/`+field+`": `+want+`.` {
			t.Errorf("%s: error %v, want a type error on %q: %s", in, err, field, want)
		}
	}
	bad(`{"id":"x"}`, "id", "a number is expected")
	bad(`{"id":-1}`, "id", "a number is expected")
	bad(`{"id":1.5}`, "id", "a number is expected")
	bad(`{"id":null}`, "id", "a number is expected")
	bad(`{"ids":["1","x"]}`, "ids", "a number is expected")
	bad(`{"ids":{"a":1}}`, "ids", "a number is expected")
	bad(`{"n":"many"}`, "n", "an integer is expected")
	bad(`{"n":""}`, "n", "an integer is expected")
	bad(`{"n":1.5}`, "n", "an integer is expected")
	bad(`{"n":true}`, "n", "an integer is expected")
}

// TestOptPresence: every parameter knows whether it was absent, null or
// given, whatever its kind.
func TestOptPresence(t *testing.T) {
	type params struct {
		ID    opt[uint64]   `json:"id"`
		IDs   opt[ids]      `json:"ids"`
		N     opt[int64]    `json:"n" default:"5"`
		S     opt[string]   `json:"s"`
		Names opt[[]string] `json:"names"`
		Any   opt[any]      `json:"any"`
	}
	f := func(in string, want params) {
		t.Helper()
		var got params
		if err := decodeGet(json.RawMessage(in), &got); err != nil {
			t.Errorf("%s: %v", in, err)
			return
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", in, d)
		}
	}
	f(`{}`, params{N: opt[int64]{Value: 5}})
	f(`[]`, params{N: opt[int64]{Value: 5}})
	f(`{"id":"7","ids":["1",2],"n":"12","s":"","names":"a","any":["x"]}`, params{ID: opt[uint64]{Set: true, Value: 7},
		IDs: opt[ids]{Set: true, Value: ids{1, 2}}, N: opt[int64]{Set: true, Value: 12}, S: opt[string]{Set: true},
		Names: opt[[]string]{Set: true, Value: []string{"a"}}, Any: opt[any]{Set: true, Value: []any{"x"}}})
	// A legacy get takes null as absent, whatever the kind: the
	// default is not applied (PHP merges the null over it).
	f(`{"ids":null,"n":null,"any":null,"names":[]}`, params{IDs: opt[ids]{Set: true, Null: true}, N: opt[int64]{Set: true, Null: true},
		Any: opt[any]{Set: true, Null: true}, Names: opt[[]string]{Set: true, Value: []string{}}})
	f(`{"ids":7,"ids":[8]}`, params{IDs: opt[ids]{Set: true, Value: ids{8}}, N: opt[int64]{Value: 5}}) // the last wins
	// Of a repeated member, the last is taken, null included, as PHP's
	// json_decode keeps it.
	f(`{"n":3,"n":null}`, params{N: opt[int64]{Set: true, Null: true}})
	// An empty list of IDs is given (it matches nothing), one that
	// holds a string not of digits is given and empty.
	f(`{"ids":[]}`, params{IDs: opt[ids]{Set: true, Value: ids{}}, N: opt[int64]{Value: 5}})
	f(`{"ids":["1","x"]}`, params{IDs: opt[ids]{Set: true, Value: ids{}}, N: opt[int64]{Value: 5}})
	f(`{"ids":{"a":"3"," b":4}}`, params{IDs: opt[ids]{Set: true, Value: ids{3, 4}}, N: opt[int64]{Value: 5}})
}

// TestDecodeRules: each entry point refuses (or, decodeGet, ignores)
// unknown members and words type errors as the methods it serves do.
func TestDecodeRules(t *testing.T) {
	type getP struct {
		IDs  opt[ids]   `json:"ids"`
		N    opt[int64] `json:"n"`
		B    opt[bool]  `json:"b"`
		Name opt[any]   `json:"name"`
	}
	type writeP struct {
		ID   opt[uint64] `json:"id"`
		N    opt[int64]  `json:"n"`
		S    opt[string] `json:"s"`
		Nest opt[struct {
			X int `json:"x"`
		}] `json:"nest"`
	}
	type valP struct {
		H opt[int64]    `json:"h" in:"0,1,2" default:"1"`
		L opt[int64]    `json:"l" in:"1:10" zbx:"null"`
		O opt[[]string] `json:"o" in:"a,b" zbx:"normalize"`
	}
	type lenP struct {
		User opt[string] `json:"user"`
	}
	for _, c := range []struct {
		decode func(json.RawMessage) error
		in     string
		want   string // "" for no error
	}{
		// Legacy gets: nothing is refused for its type or name.
		{func(r json.RawMessage) error { return decodeGet(r, &getP{}) }, `{"x":1,"n":"a","y":2}`, ``},
		{func(r json.RawMessage) error { return decodeGet(r, &getP{}) }, `{"N":1}`, ``},
		{func(r json.RawMessage) error { return decodeGet(r, &getP{}) }, `{"ids":["1","x"]}`, ``},
		{func(r json.RawMessage) error { return decodeGet(r, &getP{}) }, `{"b":"true"}`, ``},
		{func(r json.RawMessage) error { return decodeGet(r, &getP{}) }, `[1]`, ``},
		{func(r json.RawMessage) error { return decodeGet(r, &getP{}) }, `"x"`, `Invalid parameter "/": an array or object is expected.`},
		// Strict gets: as the former get decoder.
		{func(r json.RawMessage) error { return decodeGetStrict(r, &getP{}) }, `{"x":1,"n":"a","y":2}`, `Invalid parameter "/": unexpected parameter "x".`},
		{func(r json.RawMessage) error { return decodeGetStrict(r, &getP{}) }, `{"N":1}`, `Invalid parameter "/": unexpected parameter "N".`},
		{func(r json.RawMessage) error { return decodeGetStrict(r, &getP{}) }, `{"n":"a"}`, `Invalid parameter "/n": a number is expected.`},
		{func(r json.RawMessage) error { return decodeGetStrict(r, &getP{}) }, `{"ids":["1","x"]}`, `Invalid parameter "/ids": a number is expected.`},
		{func(r json.RawMessage) error { return decodeGetStrict(r, &getP{}) }, `{"b":"true"}`, `Invalid parameter "/b": a boolean value is expected.`},
		{func(r json.RawMessage) error { return decodeGetStrict(r, &getP{}) }, `[1]`, `Invalid parameter "/": an array or object is expected.`},
		{func(r json.RawMessage) error { return decodeGetStrict(r, &getP{}) }, `{"nopermissions":1}`, ``},
		{func(r json.RawMessage) error { return decodeGet(r, &getP{}) }, `{"name":{"a":[1]},"b":null}`, ``},
		{func(r json.RawMessage) error { var ps []writeP; return decodeObjects(r, &ps) }, `[{"id":1},{"id":2,"bogus":1}]`, `Invalid parameter "/2": unexpected parameter "bogus".`},
		{func(r json.RawMessage) error { var ps []writeP; return decodeObjects(r, &ps) }, `{"ID":1,"N":"2","S":"x"}`, ``}, // names fold, as encoding/json's
		{func(r json.RawMessage) error { var ps []writeP; return decodeObjects(r, &ps) }, `{"n":"x"}`, `Invalid parameter "/1/n": an integer is expected.`},
		{func(r json.RawMessage) error { var ps []writeP; return decodeObjects(r, &ps) }, `[{},{"id":-1}]`, `Invalid parameter "/2/id": a number is expected.`},
		{func(r json.RawMessage) error { var ps []writeP; return decodeObjects(r, &ps) }, `[{"s":null}]`, `Invalid parameter "/1/s": a character string is expected.`},
		{func(r json.RawMessage) error { var ps []writeP; return decodeObjects(r, &ps) }, `[{"nest":{"x":"1"}}]`, `Invalid parameter "/1/nest/x": an integer is expected.`},
		{func(r json.RawMessage) error { var ps []writeP; return decodeObjects(r, &ps) }, `[{"nest":{"y":1}}]`, `Invalid parameter "/1": unexpected parameter "y".`},
		{func(r json.RawMessage) error { var ps []writeP; return decodeObjects(r, &ps) }, `[1]`, `Invalid parameter "/1": an object is expected.`},
		{func(r json.RawMessage) error { var ps []writeP; return decodeObjects(r, &ps) }, `[]`, `Invalid parameter "/": cannot be empty.`},
		{func(r json.RawMessage) error { var ps []writeP; return decodeObjects(r, &ps) }, `[null]`, ``},
		{func(r json.RawMessage) error { return decodeValidated(r, &valP{}) }, `{"o":["c"],"h":7}`, `Invalid parameter "/h": value must be one of 0, 1, 2.`},
		{func(r json.RawMessage) error { return decodeValidated(r, &valP{}) }, `{"o":"c","l":null}`, `Invalid parameter "/o/1": value must be one of "a", "b".`},
		{func(r json.RawMessage) error { return decodeValidated(r, &valP{}) }, `{"l":11}`, `Invalid parameter "/l": value must be one of 1-10.`},
		{func(r json.RawMessage) error { return decodeValidated(r, &valP{}) }, `{"h":null}`, `Invalid parameter "/h": an integer is expected.`},
		{func(r json.RawMessage) error { return decodeValidated(r, &valP{}) }, `[5]`, `Invalid parameter "/": unexpected parameter "0".`},
		{func(r json.RawMessage) error { return decodeLenient(r, &lenP{}) }, `{"USER":"a","other":1}`, ``},
		{func(r json.RawMessage) error { return decodeLenient(r, &lenP{}) }, `[]`, `Invalid parameter "/": a object is expected.`},
	} {
		err := c.decode(json.RawMessage(c.in))
		got := ""
		if e, ok := err.(*Error); ok {
			got = e.Data
		} else if err != nil {
			got = "not an *Error: " + err.Error()
		}
		if got != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}
