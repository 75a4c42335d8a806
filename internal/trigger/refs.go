package trigger

import (
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/expr"
)

// ItemRefs is the catalog's expression hook (catalog.Options.ExprRefs):
// it parses a trigger expression with the expression parser, so that an
// invalid one is refused with the position of the error, and returns the
// items it references.
func ItemRefs(s string) ([]catalog.ItemRef, error) {
	e, err := expr.Parse(s)
	if err != nil {
		return nil, err
	}
	refs := e.ItemRefs()
	out := make([]catalog.ItemRef, len(refs))
	for i, r := range refs {
		out[i] = catalog.ItemRef{Host: r.Host, Key: r.Key}
	}
	return out, nil
}
