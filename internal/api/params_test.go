package api

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParamsVocabulary checks the one set of lenient types that get and
// write params share: what each accepts, and the type error (with the
// member's name) for what it refuses.
func TestParamsVocabulary(t *testing.T) {
	type params struct {
		ID    flexID  `json:"id"`
		IDs   ids     `json:"ids"`
		N     flexInt `json:"n"`
		Names stringList
	}
	ok := func(in string, want params) {
		t.Helper()
		var got params
		if err := json.Unmarshal([]byte(in), &got); err != nil {
			t.Errorf("%s: %v", in, err)
			return
		}
		if d := cmp.Diff(want, got, cmp.AllowUnexported(flexID{}, flexInt{})); d != "" {
			t.Errorf("%s (-want +got):\n%s", in, d)
		}
	}
	ok(`{"id":7,"ids":7,"n":-3}`, params{ID: flexID{true, 7}, IDs: ids{7}, N: flexInt{true, -3}})
	ok(`{"id":"7","ids":["1",2],"n":"12"}`, params{ID: flexID{true, 7}, IDs: ids{1, 2}, N: flexInt{true, 12}})
	ok(`{"id":18446744073709551615,"ids":[]}`, params{ID: flexID{true, 18446744073709551615}, IDs: ids{}})
	ok(`{"ids":null,"n":null}`, params{}) // null: absent
	ok(`{"Names":"a"}`, params{Names: stringList{"a"}})

	bad := func(in, field, want string) {
		t.Helper()
		var got params
		err := json.Unmarshal([]byte(in), &got)
		var ute *json.UnmarshalTypeError
		if !errors.As(err, &ute) || ute.Field != field || expected(ute.Type) != want {
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
