package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// sideJSON is a table of one JSON row per item of some types, beside
// items (item_login, item_jmx, item_odbc): what only those types carry.
// One loader and one writer serve them all; the names are for errors.
type sideJSON struct {
	table string              // e.g. "item_jmx"
	what  string              // one row, e.g. "JMX settings"
	whose string              // the types, e.g. "a JMX agent item"
	all   string              // every row, e.g. "JMX agent settings"
	uses  func(ItemType) bool // the types that have a row
}

// loadSideJSON attaches t's rows to their items through set; a row of
// an item of another type, or one that does not decode, is ErrCorrupt.
func loadSideJSON[T any](ctx context.Context, tx *sql.Tx, items []Item, t sideJSON, set func(*Item, *T)) error {
	byID := map[uint64]int{}
	for i := range items {
		if t.uses(items[i].Type) {
			byID[items[i].ID] = i
		}
	}
	err := queryEach(ctx, tx, "SELECT item_id, config FROM "+t.table, func(r *sql.Rows) error {
		var id uint64
		var config string
		if err := r.Scan(&id, &config); err != nil {
			return err
		}
		i, ok := byID[id]
		if !ok {
			return fmt.Errorf("%w: %s of item %d, which is not %s", ErrCorrupt, t.what, id, t.whose)
		}
		var v T
		if err := json.Unmarshal([]byte(config), &v); err != nil {
			return fmt.Errorf("%w: %s of item %d: %v", ErrCorrupt, t.what, id, err)
		}
		set(&items[i], &v)
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot load %s: %w", t.all, err)
	}
	return nil
}

// writeSideJSON stores it's row of t (config; none when !present),
// replacing the row it had if had.
func (e *Edit) writeSideJSON(it *Item, t sideJSON, had, present bool, config func() string) error {
	if had {
		if _, err := e.exec("DELETE FROM "+t.table+" WHERE item_id = ?", it.ID); err != nil {
			return e.fail(fmt.Errorf("cannot update the %s of item %d (%q): %w", t.what, it.ID, it.Key, err))
		}
	}
	if !present {
		return nil
	}
	if _, err := e.exec("INSERT INTO "+t.table+" (item_id, config) VALUES (?, ?)", it.ID, config()); err != nil {
		return e.fail(fmt.Errorf("cannot store the %s of item %d (%q): %w", t.what, it.ID, it.Key, err))
	}
	return nil
}
