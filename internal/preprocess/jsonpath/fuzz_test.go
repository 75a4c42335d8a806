package jsonpath

import "testing"

// FuzzQuery compiles arbitrary paths and runs them on arbitrary
// documents: neither may panic, and a compiled path must run.
func FuzzQuery(f *testing.F) {
	for _, p := range []string{`$.a`, `$..b[0]`, `$.a[?(@.x == "y" && @.z > 1)].length()`, `$['a','b'][1:3:1]`, `$.*.sum()`, `$[?(!(@.a =~ "x"))]`} {
		f.Add(p, `{"a":[{"x":"y","z":2},{"b":[1,2]}],"b":"s"}`)
	}
	f.Add(`$.books[*].price.avg()`, store)
	f.Fuzz(func(t *testing.T, path, doc string) {
		p, err := Compile(path)
		if err != nil {
			return
		}
		_, _ = p.Query(doc)
		_, _ = p.Find(doc)
	})
}
