package jsonpath

import (
	"errors"
	"strings"
	"testing"
)

// store is the document of the Zabbix docs' JSONPath examples.
const store = `{
  "books": [
    {"category": "reference", "author": "Nigel Rees", "title": "Sayings of the Century", "price": 8.95, "id": 1},
    {"category": "fiction", "author": "Evelyn Waugh", "title": "Sword of Honour", "price": 12.99, "id": 2},
    {"category": "fiction", "author": "Herman Melville", "title": "Moby Dick", "isbn": "0-553-21311-3", "price": 8.99, "id": 3},
    {"category": "fiction", "author": "J. R. R. Tolkien", "title": "The Lord of the Rings", "isbn": "0-395-19395-8", "price": 22.99, "id": 4}
  ],
  "services": {
    "delivery": {"servicegroup": 1000, "description": "Next day delivery in local town", "active": true, "price": 5},
    "bookbinding": {"servicegroup": 1001, "description": "Printing and assembling book in A5 format", "active": true, "price": 154.99},
    "restoration": {"servicegroup": 1002, "description": "Various restoration methods", "active": false, "methods": [
      {"description": "Chemical cleaning", "price": 46},
      {"description": "Pressing pages damaged by moisture", "price": 24.5},
      {"description": "Rebinding torn book", "price": 99.49}
    ]}
  },
  "filters": {"price": 10, "category": "fiction", "no filters": "no \"filters\""},
  "closed message": "Store is closed"
}`

func TestQuery(t *testing.T) {
	storeDoc := Parse(store)
	f := func(path, want string) {
		t.Helper()
		p, err := Compile(path)
		if err != nil {
			t.Fatalf("Compile(%q): %v", path, err)
		}
		got, err := p.Query(store)
		if err != nil || got != want {
			t.Fatalf("Query(%q) = %q, %v; want %q", path, got, err, want)
		}
		// The same on the one parsed document every case shares: a
		// query leaves the document as it found it.
		if got, err := p.QueryDoc(storeDoc); err != nil || got != want {
			t.Fatalf("QueryDoc(%q) = %q, %v; want %q", path, got, err, want)
		}
	}
	// The Zabbix docs' examples.
	f(`$.filters.price`, `10`)
	f(`$.filters.category`, `fiction`)
	f(`$.filters['no filters']`, `no "filters"`)
	f(`$.filters`, `{"price": 10, "category": "fiction", "no filters": "no \"filters\""}`)
	f(`$.books[1].title`, `Sword of Honour`)
	f(`$.books[-1].author`, `J. R. R. Tolkien`)
	f(`$.books.length()`, `4`)
	f(`$.books[?(@.price < 10)].title`, `["Sayings of the Century","Moby Dick"]`)
	f(`$.books[?(@.category == $.filters.category)].title`, `["Sword of Honour","Moby Dick","The Lord of the Rings"]`)
	f(`$.books[?(@.author =~ " Waugh$")].title`, `["Sword of Honour"]`)
	f(`$.books[?(@.price < 10 && @.category == "fiction")].title`, `["Moby Dick"]`)
	f(`$.books[?(@.isbn)].id`, `[3,4]`)
	f(`$.books[?(!(@.price > 10) || @.id == 4)].id`, `[1,3,4]`)
	f(`$..id`, `[1,2,3,4]`)
	f(`$.services..price`, `[5,154.99,46,24.5,99.49]`)
	f(`$.services..methods[?(@.price > 20 && @.price < 50)].description`, `["Chemical cleaning","Pressing pages damaged by moisture"]`)
	f(`$..books.length()`, `1`)
	f(`$.books[*].price.sum()`, `53.92`)
	f(`$.books[*].price.min()`, `8.95`)
	f(`$.books[*].price.max()`, `22.99`)
	f(`$.books[*].price.avg()`, `13.48`)
	f(`$.books[?(@.price > 10)].title.first()`, `Sword of Honour`)
	f(`$.services[?(@.active == false)].servicegroup`, `[1002]`)
	f(`$.services.*.servicegroup`, `[1000,1001,1002]`)
	f(`$.books[1:3].id`, `[2,3]`)
	f(`$.books[::2].id`, `[1,3]`)
	f(`$.books[-2:].id`, `[3,4]`)
	f(`$.books[0,2].id`, `[1,3]`)
	f(`$['closed message']`, `Store is closed`)
	f(`$["books"][0]["price"]`, `8.95`)
}

func TestQueryErrors(t *testing.T) {
	f := func(path, doc string, wantErr string) {
		t.Helper()
		p, err := Compile(path)
		if err == nil {
			_, err = p.Query(doc)
		}
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("%q on %q: %v, want %q", path, doc, err, wantErr)
		}
	}
	f(`$.a`, `{"b":1}`, ErrNoMatch.Error())
	f(`$.a[?(@.x == 1)]`, `{"a":[{"x":2}]}`, ErrNoMatch.Error())
	f(`$.a.sum()`, `{"a":[]}`, ErrNoMatch.Error())
	f(`$.a.sum()`, `{"a":["x"]}`, "non-numeric")
	f(`$.a`, `{"a":1`, "cannot parse as a valid JSON object")
	f(`$.a`, `{"a":01x}`, "cannot parse as a valid JSON object")
	f(`$.a`, strings.Repeat("[", MaxDepth+2), "nesting too deep")
	f(`a.b`, `{}`, `unsupported construct in jsonpath starting with: "a.b"`)
	f(`$.a[`, `{}`, `unsupported construct`)
	f(`$.a[?(@.b ==)]`, `{}`, `unsupported construct`)
	f(`$.a[0:1:0]`, `{}`, `unsupported construct`)
	f(`$[?(`+strings.Repeat("(", 100)+`1`+strings.Repeat(")", 100)+`)]`, `{}`, `unsupported construct`)
}

func TestFind(t *testing.T) {
	p, err := Compile(`$.error`)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := p.Find(`{"error":"denied"}`); !ok || r != "denied" {
		t.Fatalf("Find = %q, %v", r, ok)
	}
	for _, doc := range []string{`{"ok":1}`, `not json`} {
		if r, ok := p.Find(doc); ok {
			t.Fatalf("Find on %q = %q, true", doc, r)
		}
	}
	q, _ := Compile(`$.missing`)
	if _, err := q.Query(`{}`); !errors.Is(err, ErrNoMatch) {
		t.Fatalf("Query of a missing member: %v, want ErrNoMatch", err)
	}
}

func TestDocNotJSON(t *testing.T) {
	p, err := Compile("$.a")
	if err != nil {
		t.Fatal(err)
	}
	d := Parse(`{"a":`)
	_, qerr := p.Query(`{"a":`)
	if _, err := p.QueryDoc(d); err == nil || err.Error() != qerr.Error() {
		t.Fatalf("QueryDoc on broken JSON: %v, want Query's %v", err, qerr)
	}
	if _, found := p.FindDoc(d); found {
		t.Fatal("FindDoc found something in broken JSON")
	}
	if r, found := p.FindDoc(Parse(`{"a":"x"}`)); !found || r != "x" {
		t.Fatalf("FindDoc = %q, %v", r, found)
	}
}
