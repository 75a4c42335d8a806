package catalog

import (
	"fmt"
	"strings"
)

// Batched inserts, for the copies a link makes: linking a template of 41
// items to 10,000 hosts writes 410,000 items with their tags and the
// triggers over them. One INSERT per row cost most of the link's time
// (the driver's overhead per statement, not SQLite's work), so copies
// are written many rows per statement. SQLite gives the rows of one
// INSERT consecutive rowids in the order of its VALUES (the tables are
// AUTOINCREMENT and this Edit is the only writer), so the IDs are the
// last one returned counting back; TestLinkCopiesItemsAndTriggers and
// the reload tests check them against what a fresh load reads.

// maxRowsPerInsert bounds a statement's rows: 100 rows of 24 columns
// stay far under SQLite's 32,766 parameters, and a statement is cached
// per row count, so few texts are prepared.
const maxRowsPerInsert = 100

// execRows inserts rows (each cols values) with prefix ("INSERT INTO t
// (a, b) VALUES "), many per statement, and returns the rowid of each.
func (e *Edit) execRows(prefix string, cols int, rows [][]any) ([]uint64, error) {
	ids := make([]uint64, 0, len(rows))
	one := "(" + strings.Repeat("?, ", cols-1) + "?)"
	for len(rows) > 0 {
		n := min(len(rows), maxRowsPerInsert)
		q := prefix + strings.Repeat(one+", ", n-1) + one
		args := make([]any, 0, n*cols)
		for _, r := range rows[:n] {
			if len(r) != cols {
				return nil, fmt.Errorf("BUG: a row of %d values for %d columns", len(r), cols)
			}
			args = append(args, r...)
		}
		last, err := e.exec(q, args...)
		if err != nil {
			return nil, e.fail(fmt.Errorf("cannot insert %d rows (%s): %w", n, strings.TrimSpace(prefix), err))
		}
		for i := range n {
			ids = append(ids, last-uint64(n-1-i))
		}
		rows = rows[n:]
	}
	return ids, nil
}

const insertItemRows = "INSERT INTO items (host_id, key_, name, type, value_type, units, delay, history, trends, status, interface_id, timeout, timestamp_precision, master_item_id, params, preprocessing, snmp_oid, retry_delay, valuemap_id, description, template_id, uuid, inventory_link) VALUES "

func itemRow(it *Item) []any {
	return []any{it.HostID, it.Key, it.Name, int64(it.Type), int64(it.ValueType), it.Units, it.Delay, it.History, it.Trends, status(it.Enabled), it.InterfaceID, it.Ext().Timeout, it.Ext().TimestampPrecision,
		it.MasterItemID, it.Ext().Params, encodeSteps(it.Preprocessing), it.Ext().SNMPOID, it.Ext().RetryDelay, it.ValueMapID, it.Ext().Description, it.TemplateID, it.Ext().UUID, int64(it.InventoryLink)}
}

// insertItemsBatch writes new items (validated, their strings owned)
// with their tags and HTTP requests, and adds them to the overlay.
// masterOf names the master of a dependent item that is in the batch
// too: it is written first, level by level, and the dependent takes its
// ID.
func (e *Edit) insertItemsBatch(items []*Item, masterOf map[*Item]*Item) error {
	rest := items
	for len(rest) > 0 {
		var level, next []*Item
		for _, n := range rest {
			if m := masterOf[n]; m != nil {
				if m.ID == 0 {
					next = append(next, n)
					continue
				}
				n.MasterItemID = m.ID
			}
			level = append(level, n)
		}
		if len(level) == 0 {
			return fmt.Errorf("BUG: %d dependent items whose masters are never written", len(next))
		}
		rows := make([][]any, len(level))
		for i, n := range level {
			rows[i] = itemRow(n)
		}
		ids, err := e.execRows(insertItemRows, 23, rows)
		if err != nil {
			return err
		}
		// The side tables of the types that have one, each in batches
		// as well: a template's SSH, JMX or database monitor items are
		// copied with their logins, its IPMI items with their sensors,
		// its script items with their parameters.
		var tags, https, logins, jmxs, odbcs, sensors, logfmts, traps, params, llds, discs [][]any
		for i, n := range level {
			n.ID = ids[i]
			for _, t := range n.Tags {
				tags = append(tags, []any{n.ID, t.Tag, t.Value})
			}
			if n.Ext().HTTP != nil {
				https = append(https, []any{n.ID, encodeHTTP(n.Ext().HTTP)})
			}
			if n.Ext().Login != nil {
				logins = append(logins, []any{n.ID, encodeLogin(n.Ext().Login)})
			}
			if n.Ext().JMX != nil {
				jmxs = append(jmxs, []any{n.ID, encodeJMX(n.Ext().JMX)})
			}
			if n.Ext().ODBC != nil {
				odbcs = append(odbcs, []any{n.ID, encodeODBC(n.Ext().ODBC)})
			}
			if n.Ext().IPMISensor != "" {
				sensors = append(sensors, []any{n.ID, n.Ext().IPMISensor})
			}
			if t := n.Ext().Traps; t != nil {
				traps = append(traps, trapsRow(n.ID, t))
			}
			if n.Ext().LogTimeFmt != "" {
				logfmts = append(logfmts, []any{n.ID, n.Ext().LogTimeFmt})
			}
			for i, p := range n.Ext().Parameters {
				params = append(params, []any{n.ID, i, p.Name, p.Value})
			}
			if n.Ext().LLD != nil {
				llds = append(llds, []any{n.ID, encodeLLD(n.Ext().LLD)})
			}
			if d := n.Discovery; d != nil {
				discs = append(discs, []any{n.ID, d.RuleID, d.ProtoID, d.TSDelete})
			}
			e.addCreated(n)
		}
		for _, t := range []struct {
			prefix string
			cols   int
			rows   [][]any
		}{
			{"INSERT INTO item_tags (item_id, tag, value) VALUES ", 3, tags},
			{"INSERT INTO item_http (item_id, config) VALUES ", 2, https},
			{"INSERT INTO item_login (item_id, config) VALUES ", 2, logins},
			{"INSERT INTO item_jmx (item_id, config) VALUES ", 2, jmxs},
			{"INSERT INTO item_odbc (item_id, config) VALUES ", 2, odbcs},
			{"INSERT INTO item_ipmi (item_id, sensor) VALUES ", 2, sensors},
			{"INSERT INTO item_logtimefmt (item_id, fmt) VALUES ", 2, logfmts},
			{"INSERT INTO item_traps (item_id, hosts, allow) VALUES ", 3, traps},
			{"INSERT INTO item_parameters (item_id, idx, name, value) VALUES ", 4, params},
			{"INSERT INTO item_lld (item_id, config) VALUES ", 2, llds},
			{"INSERT INTO item_discovery (item_id, rule_id, proto_id, ts_delete) VALUES ", 4, discs},
		} {
			if _, err := e.execRows(t.prefix, t.cols, t.rows); err != nil {
				return err
			}
		}
		rest = next
	}
	return nil
}

// addCreated puts a new item, written, in the overlay.
func (e *Edit) addCreated(it *Item) {
	initMap(&e.items)
	initMap(&e.keys)
	initMap(&e.createdOn)
	e.items[it.ID] = it
	e.keys[hostKey{it.HostID, it.Key}] = it.ID
	e.created = append(e.created, it)
	e.createdOn[it.HostID] = append(e.createdOn[it.HostID], it)
	e.indexCopy(it)
	e.noteDependent(it)
}

const insertTriggerRows = "INSERT INTO triggers (description, expression, recovery_mode, recovery_expression, priority, status, type, manual_close, opdata, comments, url, correlation_mode, correlation_tag, max_check_attempts, event_name, template_id, uuid) VALUES "

// insertTriggersBatch writes new triggers with their items and tags
// (not their dependencies: the caller writes those, with
// insertTriggerDeps, once every trigger they name has an ID) and adds
// them to the overlay.
func (e *Edit) insertTriggersBatch(ts []*Trigger) error {
	rows := make([][]any, len(ts))
	for i, t := range ts {
		rows[i] = []any{t.Description, t.Expression, int64(t.RecoveryMode), t.RecoveryExpression, int64(t.Priority), status(t.Enabled), b2i(t.Multiple), b2i(t.ManualClose),
			t.Opdata, t.Comments, t.URL, int64(t.CorrelationMode), t.CorrelationTag, int64(t.MaxCheckAttempts), t.EventName, t.TemplateID, t.UUID}
	}
	ids, err := e.execRows(insertTriggerRows, 17, rows)
	if err != nil {
		return err
	}
	var items, tags [][]any
	initMap(&e.triggers)
	for i, t := range ts {
		t.ID = ids[i]
		for _, id := range t.ItemIDs {
			items = append(items, []any{t.ID, id})
		}
		for _, tg := range t.Tags {
			tags = append(tags, []any{t.ID, tg.Tag, tg.Value})
		}
		e.setTrigger(t.ID, t)
		e.indexTrigger(t)
		e.newTriggers = append(e.newTriggers, t.ID)
	}
	if _, err := e.execRows("INSERT INTO trigger_items (trigger_id, item_id) VALUES ", 2, items); err != nil {
		return err
	}
	_, err = e.execRows("INSERT INTO trigger_tags (trigger_id, tag, value) VALUES ", 3, tags)
	return err
}

// insertTriggerDeps writes the dependencies of new triggers, as their
// Dependencies list them.
func (e *Edit) insertTriggerDeps(ts []*Trigger) error {
	var rows [][]any
	for _, t := range ts {
		for _, d := range t.Dependencies {
			rows = append(rows, []any{t.ID, d})
		}
	}
	_, err := e.execRows("INSERT INTO trigger_deps (trigger_id, depends_on) VALUES ", 2, rows)
	return err
}
