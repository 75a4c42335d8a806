package trigger

import (
	"errors"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/expr"
)

// ItemRefs is the catalog's expression hook (catalog.Options.ExprRefs):
// it parses a trigger expression with the expression parser, so that an
// invalid one is refused with the position of the error, and returns the
// items it references. Aggregate functions over many items are refused,
// as Zabbix refuses them in triggers.
func ItemRefs(s string) ([]catalog.ItemRef, error) {
	e, err := expr.Parse(s)
	if err != nil {
		return nil, err
	}
	if e.Aggregates() {
		// As in Zabbix: aggregates over many items belong to calculated
		// items, whose value a trigger can then reference.
		return nil, errors.New("aggregate functions (*_foreach, item_count, bucket_*) are allowed in calculated items only; reference a calculated item instead")
	}
	refs := e.ItemRefs()
	out := make([]catalog.ItemRef, len(refs))
	for i, r := range refs {
		out[i] = catalog.ItemRef{Host: r.Host, Key: r.Key}
	}
	return out, nil
}
