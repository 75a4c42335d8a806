package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"unicode/utf8"
)

// An item's logtimefmt (Item.LogTimeFmt): Zabbix 6.0's "log time format"
// of log items, the pattern (y M d h m s placeholders) that places the
// time stamp inside a log line. It lives in a table of its own with a
// row only where it is set, so that the items table and the statements
// every other change writes it with stay as they were. Zabbix 6.0 keeps
// it on items of every value type (recorded from 6.0.14), so does
// Peregrine; the official SNMP templates' "SNMP traps (fallback)" items
// carry one.

// MaxLogTimeFmtLen is logtimefmt's length limit in Zabbix 6.0's
// database schema.
const MaxLogTimeFmtLen = 64

const itemLogTimeFmtSchema = `
CREATE TABLE item_logtimefmt (
	item_id INTEGER PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
	fmt     TEXT NOT NULL
);
`

// migrateItemLogTimeFmt is the migration adding items' logtimefmt, kept
// on its own so that schema changes made in parallel renumber cleanly.
// Items of an older database have no row: none had a format.
func migrateItemLogTimeFmt() string { return itemLogTimeFmtSchema }

// LogTimeFmtError is a logtimefmt over the limit, in Zabbix 6.0's words
// (recorded from 6.0.14): `Value "..." is too long for field
// "logtimefmt" - 70 characters. Allowed length is 64 characters.`.
type LogTimeFmtError struct {
	Value string
	Len   int
}

func (e *LogTimeFmtError) Error() string {
	return fmt.Sprintf(`Value "%s" is too long for field "logtimefmt" - %d characters. Allowed length is %d characters.`, e.Value, e.Len, MaxLogTimeFmtLen)
}

// checkLogTimeFmt checks an item's logtimefmt length.
func checkLogTimeFmt(s string) error {
	if n := utf8.RuneCountInString(s); n > MaxLogTimeFmtLen {
		return &LogTimeFmtError{Value: s, Len: n}
	}
	return nil
}

// loadItemLogTimeFmt attaches the item_logtimefmt rows to their items.
func loadItemLogTimeFmt(ctx context.Context, tx *sql.Tx, items []Item) error {
	var byItem map[uint64]int
	err := queryEach(ctx, tx, "SELECT item_id, fmt FROM item_logtimefmt", func(r *sql.Rows) error {
		if byItem == nil {
			byItem = make(map[uint64]int, len(items))
			for i := range items {
				byItem[items[i].ID] = i
			}
		}
		var id uint64
		var s string
		if err := r.Scan(&id, &s); err != nil {
			return err
		}
		i, ok := byItem[id]
		if !ok {
			return fmt.Errorf("%w: logtimefmt of unknown item %d", ErrCorrupt, id)
		}
		items[i].MutExt().LogTimeFmt = s
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot load items' logtimefmt: %w", err)
	}
	return nil
}

// writeItemLogTimeFmt stores an item's logtimefmt: a row unless it is
// empty.
func writeItemLogTimeFmt(exec execer, id uint64, f string, had bool) error {
	if had {
		if err := exec("DELETE FROM item_logtimefmt WHERE item_id = ?", id); err != nil {
			return err
		}
	}
	if f == "" {
		return nil
	}
	return exec("INSERT INTO item_logtimefmt (item_id, fmt) VALUES (?, ?)", id, f)
}
