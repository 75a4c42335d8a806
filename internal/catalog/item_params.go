package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ItemParam is one of a script item's parameters: Zabbix 6.0's item
// "parameters", the name/value pairs a script item (type 21) hands its
// script as the JSON object value, user macros and a few built-in ones
// resolved at check time (package poll/script). Items of other types
// have none (6.0 stores those item.create is given on any item, without
// checking them; recorded from 6.0.14), and lose them with a type change
// (as in 6.0). The field names are the API's and the import format's.
type ItemParam struct {
	Name  string `yaml:"name" json:"name"`
	Value string `yaml:"value" json:"value"`
}

// Limits of item parameters: Zabbix 6.0's columns (item_parameter.name
// varchar(255), value varchar(2048)), in characters, and Peregrine's
// bound of their count.
const (
	MaxItemParamNameLen  = 255
	MaxItemParamValueLen = 2048
	MaxItemParams        = 1000
)

// checkItemParams validates an item's parameters: names not empty and
// unique, lengths within 6.0's columns, at most MaxItemParams.
func checkItemParams(ps []ItemParam, ip string, el *errList) {
	if len(ps) > MaxItemParams {
		el.addf(ip, "%d parameters, more than %d", len(ps), MaxItemParams)
		return
	}
	seen := make(map[string]bool, len(ps))
	for i, p := range ps {
		pp := ip + "[" + strconv.Itoa(i) + "]"
		switch {
		case p.Name == "":
			el.addf(pp+".name", "cannot be empty")
		case !utf8.ValidString(p.Name) || !utf8.ValidString(p.Value):
			el.addf(pp, "is not valid UTF-8")
		case utf8.RuneCountInString(p.Name) > MaxItemParamNameLen:
			el.addf(pp+".name", "longer than %d characters", MaxItemParamNameLen)
		case utf8.RuneCountInString(p.Value) > MaxItemParamValueLen:
			el.addf(pp+".value", "longer than %d characters", MaxItemParamValueLen)
		case seen[p.Name]:
			el.addf(pp+".name", "parameter %q is given twice", p.Name)
		}
		seen[p.Name] = true
	}
}

// cloneItemParams copies ps for a snapshot (nil for none).
func cloneItemParams(ps []ItemParam) []ItemParam {
	if len(ps) == 0 {
		return nil
	}
	out := make([]ItemParam, len(ps))
	for i, p := range ps {
		out[i] = ItemParam{Name: strings.Clone(p.Name), Value: strings.Clone(p.Value)}
	}
	return out
}

// itemParamsSchema (schema version 26) holds items' parameters, Zabbix
// 6.0's item_parameter: one row per parameter, in the item's order (idx).
// No foreign key, as item_tags: the Go side deletes an item's rows with
// the item. IF NOT EXISTS: the migration tests of older versions
// downgrade other tables and leave this one.
const itemParamsSchema = `
CREATE TABLE IF NOT EXISTS item_parameters (
	item_id INTEGER NOT NULL,
	idx     INTEGER NOT NULL,
	name    TEXT NOT NULL,
	value   TEXT NOT NULL,
	PRIMARY KEY (item_id, idx)
);
`

// migrateItemParams is the migration to the version with item
// parameters, kept on its own so that schema changes made in parallel
// renumber cleanly. Items of an older database have none.
func migrateItemParams() string { return itemParamsSchema }

// loadItemParams attaches the item_parameters rows to their items.
func loadItemParams(ctx context.Context, tx *sql.Tx, items []Item) error {
	var byID map[uint64]int
	err := queryEach(ctx, tx, "SELECT item_id, name, value FROM item_parameters ORDER BY item_id, idx", func(r *sql.Rows) error {
		if byID == nil {
			byID = make(map[uint64]int, len(items))
			for i := range items {
				byID[items[i].ID] = i
			}
		}
		var id uint64
		var p ItemParam
		if err := r.Scan(&id, &p.Name, &p.Value); err != nil {
			return err
		}
		i, ok := byID[id]
		if !ok {
			return fmt.Errorf("%w: parameter %q of item %d, which does not exist", ErrCorrupt, p.Name, id)
		}
		items[i].MutExt().Parameters = append(items[i].Ext().Parameters, p)
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot load item parameters: %w", err)
	}
	return nil
}

// writeItemParams stores the parameters of item id, replacing those it
// had if had.
func writeItemParams(exec execer, id uint64, ps []ItemParam, had bool) error {
	if had {
		if err := exec("DELETE FROM item_parameters WHERE item_id = ?", id); err != nil {
			return err
		}
	}
	for i, p := range ps {
		if err := exec("INSERT INTO item_parameters (item_id, idx, name, value) VALUES (?, ?, ?, ?)", id, i, p.Name, p.Value); err != nil {
			return err
		}
	}
	return nil
}

// hasParams reports whether items of type t have params (a formula,
// script, command or query).
func (t ItemType) hasParams() bool {
	switch t {
	case Calculated, Script, SSHAgent, TelnetAgent, ODBC:
		return true
	}
	return false
}

// sameItemParams reports whether two lists are equal, in order.
func sameItemParams(a, b []ItemParam) bool { return slices.Equal(a, b) }
