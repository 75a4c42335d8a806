package catalog

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
)

// schemaVersion is the version of the schema below. Open refuses a
// database with a newer version and migrates older ones (see migrations).
const schemaVersion = 37

// schema is the SQLite schema. Notes:
//   - IDs are AUTOINCREMENT so that an ID is never reused, even after the
//     row with the highest ID is deleted: history is keyed by item ID, and
//     a recycled ID would hand an old item's values to a new one.
//   - status columns hold the Zabbix numbers: 0 enabled, 1 disabled.
//   - catalog_meta holds exactly one row: the schema version and the
//     catalog revision (Snapshot.Version), bumped by every Apply that
//     changes something.
const schema = `
CREATE TABLE catalog_meta (
	id             INTEGER PRIMARY KEY CHECK (id = 1),
	schema_version INTEGER NOT NULL,
	revision       INTEGER NOT NULL
);
CREATE TABLE host_groups (
	id   INTEGER PRIMARY KEY AUTOINCREMENT,
	name TEXT NOT NULL UNIQUE
);
CREATE TABLE hosts (
	id     INTEGER PRIMARY KEY AUTOINCREMENT,
	host   TEXT NOT NULL UNIQUE,
	name   TEXT NOT NULL,
	status INTEGER NOT NULL
);
CREATE TABLE hosts_groups (
	host_id  INTEGER NOT NULL REFERENCES hosts (id),
	group_id INTEGER NOT NULL REFERENCES host_groups (id),
	PRIMARY KEY (host_id, group_id)
) WITHOUT ROWID;
CREATE TABLE items (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	host_id    INTEGER NOT NULL REFERENCES hosts (id),
	key_       TEXT NOT NULL,
	name       TEXT NOT NULL,
	type       INTEGER NOT NULL,
	value_type INTEGER NOT NULL,
	units      TEXT NOT NULL,
	delay      TEXT NOT NULL,
	history    TEXT NOT NULL,
	trends     TEXT NOT NULL,
	status     INTEGER NOT NULL,
	timestamp_precision TEXT NOT NULL DEFAULT '',
	UNIQUE (host_id, key_)
);
` + hostTagsSchema + interfacesSchema + hostTLSSchema + itemPreprocSchema + snmpSchema + itemHTTPSchema + triggerSchema + macroSchema + maintenanceSchema + softHardSchema + alertSchema + valueMapSchema + scriptSchema + eventNameSchema + hostDescSchema + itemTagsSchema + regexpSchema + defaultsSchema + itemDescSchema + ipmiSchema + hostPSKSchema + itemLoginSchema + itemJMXSchema + itemODBCSchema + templateSchema + itemParamsSchema + graphSchema + dashboardSchema + lldSchema + proxySchema + autoregSchema + hostInventorySchema + lldHostsSchema + druleSchema + httpTestSchema + itemLogTimeFmtSchema + correlationSchema + itemTrapsSchema

// itemDescSchema adds the items' description (schema version 19),
// Zabbix's item field of the same name; "" for the items of an older
// database.
const itemDescSchema = `
ALTER TABLE items ADD COLUMN description TEXT NOT NULL DEFAULT '';
`

// hostDescSchema adds the hosts' description (schema version 15),
// Zabbix's host field of the same name; "" for the hosts of an older
// database.
const hostDescSchema = `
ALTER TABLE hosts ADD COLUMN description TEXT NOT NULL DEFAULT '';
`

// itemTagsSchema holds item tags (schema version 16), Zabbix 6.0's
// item_tag: name/value pairs in the item's order, the order being rowid
// order, as host tags are kept. No foreign key, as item_http: the Go
// side deletes an item's tags with the item.
const itemTagsSchema = `
CREATE TABLE item_tags (
	item_id INTEGER NOT NULL,
	tag     TEXT NOT NULL,
	value   TEXT NOT NULL
);
CREATE INDEX item_tags_item ON item_tags (item_id);
`

// hostTagsSchema holds host tags (schema version 2): name/value pairs in
// the order given, the order being rowid order.
const hostTagsSchema = `
CREATE TABLE host_tags (
	host_id INTEGER NOT NULL REFERENCES hosts (id),
	tag     TEXT NOT NULL,
	value   TEXT NOT NULL
);
CREATE INDEX host_tags_host ON host_tags (host_id);
`

// interfacesSchema adds host interfaces and the items' interface and
// timeout (schema version 3). An item's interface_id is 0 for none, not
// NULL: no foreign key, so that the Go side owns the rule that an
// interface in use cannot be deleted and reports it with the item's name.
// details holds an SNMP interface's settings as a JSON object, "" for
// none. Items of an older database get no interface and the default
// timeout.
const interfacesSchema = `
CREATE TABLE interfaces (
	id      INTEGER PRIMARY KEY AUTOINCREMENT,
	host_id INTEGER NOT NULL REFERENCES hosts (id),
	type    INTEGER NOT NULL,
	main    INTEGER NOT NULL,
	useip   INTEGER NOT NULL,
	ip      TEXT NOT NULL,
	dns     TEXT NOT NULL,
	port    TEXT NOT NULL,
	details TEXT NOT NULL
);
CREATE INDEX interfaces_host ON interfaces (host_id);
ALTER TABLE items ADD COLUMN interface_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE items ADD COLUMN timeout TEXT NOT NULL DEFAULT '';
`

// hostTLSSchema adds the hosts' encryption settings (schema version 5),
// Zabbix's host fields of the same names: tls_connect is how the server
// connects to the host's agent (1 unencrypted, 2 PSK, 4 certificate),
// tls_accept the bitmask of what it accepts from the host's agents and
// senders; tls_issuer and tls_subject, if not empty, must equal the peer
// certificate's. Existing hosts get Zabbix's defaults: unencrypted both
// ways. Pre-shared keys came later (hostPSKSchema).
const hostTLSSchema = `
ALTER TABLE hosts ADD COLUMN tls_connect INTEGER NOT NULL DEFAULT 1;
ALTER TABLE hosts ADD COLUMN tls_accept INTEGER NOT NULL DEFAULT 1;
ALTER TABLE hosts ADD COLUMN tls_issuer TEXT NOT NULL DEFAULT '';
ALTER TABLE hosts ADD COLUMN tls_subject TEXT NOT NULL DEFAULT '';
`

// itemPreprocSchema adds what issue 12 needs of items (schema version
// 6): master_item_id is a dependent item's master (0 for none; no
// foreign key, as interface_id, so that deleting a master deletes its
// dependents by the Go side's rule, which also counts them); params is
// a calculated item's formula or a script item's script;
// preprocessing is the steps as a JSON array of Zabbix's step objects
// ({"type":12,"params":"$.a","error_handler":0,"error_handler_params":""}),
// "" for none. One column rather than a table of steps: the steps are
// only ever read and written whole, with their item. Existing items get
// no master, no params and no steps.
const itemPreprocSchema = `
ALTER TABLE items ADD COLUMN master_item_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE items ADD COLUMN params TEXT NOT NULL DEFAULT '';
ALTER TABLE items ADD COLUMN preprocessing TEXT NOT NULL DEFAULT '';
`

// snmpSchema adds the SNMP agent items' snmp_oid (schema version 7),
// the Zabbix item field of the same name; "" for every other item, and
// for the SNMP items of an older database, which could not be polled
// before (the scheduler reports them not supported until one is set).
// SNMP interfaces' settings were stored from version 3 on (details).
const snmpSchema = `
ALTER TABLE items ADD COLUMN snmp_oid TEXT NOT NULL DEFAULT '';
`

// itemHTTPSchema holds the request of each HTTP agent item (schema
// version 8): one row per item of type 19, its HTTPItem as JSON with
// Zabbix's field names. A table of its own rather than twenty columns of
// items that every other item would carry empty; read once per snapshot
// load. Items of an older database have none (there were no HTTP agent
// checks to configure). IF NOT EXISTS: the migration tests of older
// versions downgrade other tables and leave this one.
const itemHTTPSchema = `
CREATE TABLE IF NOT EXISTS item_http (
	item_id INTEGER PRIMARY KEY,
	config  TEXT NOT NULL
);
`

// hostPSKSchema adds the hosts' pre-shared keys (schema version 21),
// Zabbix's host fields tls_psk_identity and tls_psk: both empty unless
// tls_connect is 2 or tls_accept includes 2; the key is its hexadecimal
// digits as given, as Zabbix 6.0 stores it. The catalog file is owner
// only (sqlitedb), like Zabbix's database that holds them in clear.
const hostPSKSchema = `
ALTER TABLE hosts ADD COLUMN tls_psk_identity TEXT NOT NULL DEFAULT '';
ALTER TABLE hosts ADD COLUMN tls_psk TEXT NOT NULL DEFAULT '';
`

// migrateItemHTTP is the migration 7 → 8 (HTTP agent items' requests),
// kept on its own so that schema changes made in parallel renumber
// cleanly.
func migrateItemHTTP() string { return itemHTTPSchema }

// migrations[v-1] upgrades a database of schema version v to v+1.
var migrations = []string{
	hostTagsSchema,   // 1 → 2: host tags
	interfacesSchema, // 2 → 3: host interfaces, item interface and timeout
	// 3 → 4: per-item timestamp precision ('' = the server's setting)
	"ALTER TABLE items ADD COLUMN timestamp_precision TEXT NOT NULL DEFAULT '';",
	hostTLSSchema,     // 4 → 5: host encryption settings
	itemPreprocSchema, // 5 → 6: master item, params, preprocessing steps
	snmpSchema,        // 6 → 7: SNMP items' snmp_oid
	migrateItemHTTP(), // 7 → 8: HTTP agent requests
	triggerSchema,     // 8 → 9: triggers, their items, dependencies and tags
	// 9 → 10: user macros, templates and their links, maintenances,
	// soft/hard states (triggers' max_check_attempts, items' retry_delay)
	macroSchema + maintenanceSchema + softHardSchema,
	migrateAlerts(),         // 10 → 11: media types, actions, user media
	valueMapSchema,          // 11 → 12: value maps, items' valuemap_id
	migrateScripts(),        // 12 → 13: global scripts
	eventNameSchema,         // 13 → 14: triggers' event_name
	hostDescSchema,          // 14 → 15: hosts' description
	itemTagsSchema,          // 15 → 16: item tags
	migrateRegexps(),        // 16 → 17: global regular expressions (regexp.*)
	defaultsSchema,          // 17 → 18: the default objects added (defaults.go)
	itemDescSchema,          // 18 → 19: items' description
	migrateIPMI(),           // 19 → 20: hosts' IPMI settings, items' ipmi_sensor (ipmi.go)
	hostPSKSchema,           // 20 → 21: hosts' pre-shared keys
	migrateItemLogin(),      // 21 → 22: SSH and Telnet items' logins
	migrateItemJMX(),        // 22 → 23: JMX agent items' endpoints and credentials
	migrateItemODBC(),       // 23 → 24: database monitor items' logins
	templateSchema,          // 24 → 25: templates as hosts of status 3, copies' template_id, uuids
	migrateItemParams(),     // 25 → 26: items' parameters (script items)
	migrateGraphs(),         // 26 → 27: graphs and templates' dashboards (graph.go, dashboard.go)
	migrateLLD(),            // 27 → 28: discovery rules, prototypes, discovered items (lld.go)
	migrateProxies(),        // 28 → 29: proxies, hosts' proxy (proxy.go)
	migrateAutoreg(),        // 29 → 30: autoregistration settings (autoreg.go)
	migrateHostInventory(),  // 30 → 31: hosts' inventory (host_inventory.go)
	migrateLLDHosts(),       // 31 → 32: discovered hosts (lld_hosts.go)
	migrateDRules(),         // 32 → 33: network discovery rules, discovered hosts (drule.go)
	migrateHTTPTests(),      // 33 → 34: web scenarios (httptest.go)
	migrateItemLogTimeFmt(), // 34 → 35: items' logtimefmt (logtimefmt.go)
	migrateCorrelations(),   // 35 → 36: event correlations (correlation.go)
	migrateItemTraps(),      // 36 → 37: items' allowed hosts, allow_traps (traphosts.go)
}

// SQLSchema is the store's schema for sqlitedb (peregrine ha migrate
// copies a data directory's database into PostgreSQL with it).
func SQLSchema() sqlitedb.Schema { return dbSchema }

// dbSchema is how sqlitedb creates, checks and migrates the catalog.
var dbSchema = sqlitedb.Schema{
	Kind:       "catalog",
	PGName:     "catalog",
	Meta:       "catalog_meta",
	Version:    schemaVersion,
	Create:     schema,
	InsertMeta: "INSERT INTO catalog_meta (id, schema_version, revision) VALUES (1, ?, 0)",
	Migrations: migrations,
	Corrupt:    ErrCorrupt,
	// 32 MiB of page cache: Apply and loadSnapshot walk 1M-item tables;
	// SQLite's WAL kept at most 64 MiB after a large Apply.
	Pragmas: []string{"cache_size(-32768)", "journal_size_limit(67108864)"},
}

// loadSnapshot reads every table once, in one read transaction, and builds
// the snapshot.
func loadSnapshot(ctx context.Context, db *sql.DB) (*Snapshot, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()

	var rev uint64
	if err := tx.QueryRowContext(ctx, "SELECT revision FROM catalog_meta WHERE id = 1").Scan(&rev); err != nil {
		return nil, fmt.Errorf("cannot read revision: %w", err)
	}
	var groups []Group
	err = queryEach(ctx, tx, "SELECT id, name FROM host_groups", func(r *sql.Rows) error {
		var g Group
		if err := r.Scan(&g.ID, &g.Name); err != nil {
			return err
		}
		groups = append(groups, g)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot load host groups: %w", err)
	}
	var hosts []Host
	hostIdx := map[uint64]int{}
	err = queryEach(ctx, tx, "SELECT id, host, name, status, tls_connect, tls_accept, tls_issuer, tls_subject, tls_psk_identity, tls_psk, description, uuid FROM hosts", func(r *sql.Rows) error {
		var h Host
		x := new(HostExtra) // the host's own while it loads (loadExt)
		var status, conn, accept int64
		var psk string
		if err := r.Scan(&h.ID, &h.Host, &h.Name, &status, &conn, &accept, &x.TLS.Issuer, &x.TLS.Subject, &x.TLS.PSKIdentity, &psk, &h.Description, &x.UUID); err != nil {
			return err
		}
		x.TLS.PSK = zbxpsk.Secret(psk)
		h.IsTemplate = status == statusTemplate
		x.TLS.Connect, x.TLS.Accept = uint8(conn), uint8(accept)
		if err := x.TLS.Check(); err != nil {
			return fmt.Errorf("%w: host %d: %v", ErrCorrupt, h.ID, err)
		}
		h.Extra = x
		h.Enabled = status == 0 || h.IsTemplate
		hostIdx[h.ID] = len(hosts)
		hosts = append(hosts, h)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot load hosts: %w", err)
	}
	// Ordered so that each host's GroupIDs come out ascending.
	err = queryEach(ctx, tx, "SELECT host_id, group_id FROM hosts_groups ORDER BY host_id, group_id", func(r *sql.Rows) error {
		var hid, gid uint64
		if err := r.Scan(&hid, &gid); err != nil {
			return err
		}
		i, ok := hostIdx[hid]
		if !ok {
			return fmt.Errorf("%w: membership of unknown host %d", ErrCorrupt, hid)
		}
		hosts[i].GroupIDs = append(hosts[i].GroupIDs, gid)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot load host group memberships: %w", err)
	}
	err = queryEach(ctx, tx, "SELECT host_id, tag, value FROM host_tags ORDER BY host_id, rowid", func(r *sql.Rows) error {
		var hid uint64
		var t Tag
		if err := r.Scan(&hid, &t.Tag, &t.Value); err != nil {
			return err
		}
		i, ok := hostIdx[hid]
		if !ok {
			return fmt.Errorf("%w: tag of unknown host %d", ErrCorrupt, hid)
		}
		hosts[i].Tags = append(hosts[i].Tags, t)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot load host tags: %w", err)
	}
	// Ordered so that each host's Interfaces come out sorted by ID.
	err = queryEach(ctx, tx, "SELECT id, host_id, type, main, useip, ip, dns, port, details FROM interfaces ORDER BY host_id, id", func(r *sql.Rows) error {
		var (
			f           Interface
			typ         int64
			details     string
			main, useip bool
		)
		if err := r.Scan(&f.ID, &f.HostID, &typ, &main, &useip, &f.IP, &f.DNS, &f.Port, &details); err != nil {
			return err
		}
		f.Type, f.Main, f.UseIP = InterfaceType(typ), main, useip
		if int64(f.Type) != typ || !f.Type.Valid() {
			return fmt.Errorf("%w: interface %d has type %d", ErrCorrupt, f.ID, typ)
		}
		var err error
		if f.Details, err = decodeDetails(details); err != nil {
			return fmt.Errorf("%w: interface %d details: %v", ErrCorrupt, f.ID, err)
		}
		i, ok := hostIdx[f.HostID]
		if !ok {
			return fmt.Errorf("%w: interface %d of unknown host %d", ErrCorrupt, f.ID, f.HostID)
		}
		hosts[i].Interfaces = append(hosts[i].Interfaces, f)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot load host interfaces: %w", err)
	}

	var count int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM items").Scan(&count); err != nil {
		return nil, fmt.Errorf("cannot count items: %w", err)
	}
	items := make([]Item, 0, count)
	in := newInterner()
	var stepsIn stepsInterner
	err = queryEach(ctx, tx, "SELECT id, host_id, key_, name, type, value_type, units, delay, history, trends, status, interface_id, timeout, timestamp_precision, master_item_id, params, preprocessing, snmp_oid, retry_delay, valuemap_id, description, template_id, uuid, inventory_link FROM items", func(r *sql.Rows) error {
		var (
			it                                   Item
			x                                    ItemExtra
			typ, vt, status                      int64
			units, delay, hs, trs, timeout, prec string
			steps                                string
			inv                                  int64
		)
		if err := r.Scan(&it.ID, &it.HostID, &it.Key, &it.Name, &typ, &vt, &units, &delay, &hs, &trs, &status, &it.InterfaceID, &timeout, &prec, &it.MasterItemID, &x.Params, &steps, &x.SNMPOID, &x.RetryDelay, &it.ValueMapID, &x.Description, &it.TemplateID, &x.UUID, &inv); err != nil {
			return err
		}
		if steps != "" {
			ps, err := decodeSteps(steps)
			if err != nil {
				return fmt.Errorf("%w: item %d preprocessing: %v", ErrCorrupt, it.ID, err)
			}
			it.Preprocessing = stepsIn.get(ps)
		}
		it.Type, it.ValueType, it.Enabled = ItemType(typ), history.ValueType(vt), status == 0
		if inv < 0 || inv > int64(MaxInventoryLink) {
			return fmt.Errorf("%w: item %d has inventory_link %d", ErrCorrupt, it.ID, inv)
		}
		it.InventoryLink = uint8(inv)
		if int64(it.Type) != typ || !it.Type.Valid() || int64(it.ValueType) != vt || !it.ValueType.Valid() {
			return fmt.Errorf("%w: item %d has type %d and value type %d", ErrCorrupt, it.ID, typ, vt)
		}
		// Keys, names and texts repeat on every host a template or
		// prototype made them on: hold each once (intern.go).
		it.Key, it.Name = in.text(it.Key), in.text(it.Name)
		x.Description, x.Params, x.SNMPOID = in.text(x.Description), in.text(x.Params), in.text(x.SNMPOID)
		it.Units, it.Delay, x.Timeout = in.str(units), in.str(delay), in.str(timeout)
		var err error
		if it.History, it.HistorySeconds, err = in.period(hs, minHistorySeconds); err != nil {
			return fmt.Errorf("%w: item %d history: %v", ErrCorrupt, it.ID, err)
		}
		if it.Trends, it.TrendsSeconds, err = in.period(trs, minTrendsSeconds); err != nil {
			return fmt.Errorf("%w: item %d trends: %v", ErrCorrupt, it.ID, err)
		}
		if prec != "" {
			if _, err := history.ParsePrecision(prec); err != nil {
				return fmt.Errorf("%w: item %d: %v", ErrCorrupt, it.ID, err)
			}
			x.TimestampPrecision = in.str(prec)
		}
		if !x.isZero() {
			it.Extra = in.extra(&x)
		}
		items = append(items, it)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot load items: %w", err)
	}
	if err := loadHTTP(ctx, tx, items); err != nil {
		return nil, err
	}
	if err := loadLogin(ctx, tx, items); err != nil {
		return nil, err
	}
	if err := loadJMX(ctx, tx, items); err != nil {
		return nil, err
	}
	if err := loadODBC(ctx, tx, items); err != nil {
		return nil, err
	}
	if err := loadItemParams(ctx, tx, items); err != nil {
		return nil, err
	}
	if err := loadItemTags(ctx, tx, items, in); err != nil {
		return nil, err
	}
	if err := loadIPMI(ctx, tx, hosts, items); err != nil {
		return nil, err
	}
	if err := loadHostInventory(ctx, tx, hosts); err != nil {
		return nil, err
	}
	if err := loadItemLogTimeFmt(ctx, tx, items); err != nil {
		return nil, err
	}
	if err := loadItemTraps(ctx, tx, items); err != nil {
		return nil, err
	}
	if err := loadLLD(ctx, tx, items); err != nil {
		return nil, err
	}
	if err := loadHostDiscovery(ctx, tx, hosts); err != nil {
		return nil, err
	}
	trigs, err := loadTriggers(ctx, tx)
	if err != nil {
		return nil, err
	}
	if err := loadTriggerDiscovery(ctx, tx, trigs); err != nil {
		return nil, err
	}
	hs, ts, hitems, titems := splitParts(hosts, items)
	s, err := buildSnapshot(rev, groups, hs, itemSource{extra: hitems})
	if err != nil {
		return nil, err
	}
	if s.tmpl, err = buildSnapshot(rev, nil, ts, itemSource{extra: titems}); err != nil {
		return nil, err
	}
	hostTrigs, tmplTrigs := splitTriggers(trigs, func(id uint64) bool { return s.tmpl.Item(id) != nil })
	s.setTriggers(hostTrigs)
	s.tmpl.setTriggers(tmplTrigs)
	s.tmpl.mcell = s.mcell
	for _, h := range s.tmpl.hosts {
		h.mc = s.mcell
	}
	if s.mcell.ms, err = loadMacros(ctx, tx, func(id uint64) bool { return s.Template(id) != nil }); err != nil {
		return nil, err
	}
	if s.maints, err = loadMaintenances(ctx, tx); err != nil {
		return nil, err
	}
	vms, err := loadValueMaps(ctx, tx)
	if err != nil {
		return nil, err
	}
	s.setValueMaps(vms)
	if s.regexps, err = loadRegexps(ctx, tx); err != nil {
		return nil, err
	}
	if s.ext, err = loadExtras(ctx, tx); err != nil {
		return nil, err
	}
	if s.proxies, err = loadProxies(ctx, tx, s.hosts); err != nil {
		return nil, err
	}
	return s, nil
}

func queryEach(ctx context.Context, tx *sql.Tx, q string, fn func(*sql.Rows) error) error {
	rows, err := tx.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// interner shares the few distinct values of the low-cardinality item
// fields (units, delay, history, trends) between items and caches the
// parsed retention periods.
type interner struct {
	strs    map[string]string
	periods map[periodKey]int32
	extras  map[extraKey]*ItemExtra // item_extra.go
}

// periodKey keys parsed periods by string and minimum: "3600" is a valid
// history period but not a valid trends period.
type periodKey struct {
	s   string
	min int64
}

// text is str for texts that may be long or unique: those longer than
// maxPooledLen are kept as they are.
func (in *interner) text(s string) string {
	if len(s) > maxPooledLen {
		return s
	}
	return in.str(s)
}

func newInterner() *interner {
	return &interner{strs: map[string]string{}, periods: map[periodKey]int32{}}
}

func (in *interner) str(s string) string {
	if v, ok := in.strs[s]; ok {
		return v
	}
	in.strs[s] = s
	return s
}

func (in *interner) period(s string, min int64) (string, int32, error) {
	s = in.str(s)
	k := periodKey{s, min}
	if v, ok := in.periods[k]; ok {
		return s, v, nil
	}
	v, err := retention32(s, min)
	if err != nil {
		return "", 0, err
	}
	in.periods[k] = v
	return s, v, nil
}

// loadHTTP attaches the item_http rows to their items.
func loadHTTP(ctx context.Context, tx *sql.Tx, items []Item) error {
	byID := map[uint64]int{}
	for i := range items {
		if items[i].Type == HTTPAgent {
			byID[items[i].ID] = i
		}
	}
	err := queryEach(ctx, tx, "SELECT item_id, config FROM item_http", func(r *sql.Rows) error {
		var id uint64
		var config string
		if err := r.Scan(&id, &config); err != nil {
			return err
		}
		i, ok := byID[id]
		if !ok {
			return fmt.Errorf("%w: HTTP settings of item %d, which is not an HTTP agent item", ErrCorrupt, id)
		}
		h, err := decodeHTTP(config)
		if err != nil {
			return fmt.Errorf("%w: HTTP settings of item %d: %v", ErrCorrupt, id, err)
		}
		items[i].MutExt().HTTP = h
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot load HTTP agent settings: %w", err)
	}
	return nil
}

// loadItemTags attaches the item_tags rows to their items, in the
// order they were written; names and values shared through in.
func loadItemTags(ctx context.Context, tx *sql.Tx, items []Item, in *interner) error {
	var byID map[uint64]int
	err := queryEach(ctx, tx, "SELECT item_id, tag, value FROM item_tags ORDER BY item_id, rowid", func(r *sql.Rows) error {
		if byID == nil {
			byID = make(map[uint64]int, len(items))
			for i := range items {
				byID[items[i].ID] = i
			}
		}
		var id uint64
		var t Tag
		if err := r.Scan(&id, &t.Tag, &t.Value); err != nil {
			return err
		}
		i, ok := byID[id]
		if !ok {
			return fmt.Errorf("%w: tag of unknown item %d", ErrCorrupt, id)
		}
		items[i].Tags = append(items[i].Tags, Tag{Tag: in.str(t.Tag), Value: in.str(t.Value)})
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot load item tags: %w", err)
	}
	return nil
}
