package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// IPMI: a host's IPMI settings (Host.IPMI, Zabbix's ipmi_authtype,
// ipmi_privilege, ipmi_username, ipmi_password) and an item's
// ipmi_sensor (Item.IPMISensor), schema version 20. Both live in tables
// of their own with a row only where they differ from the defaults, so
// that the hosts and items tables (and the statements every other
// change writes them with) stay as they were.

// HostIPMI is a host's IPMI settings. The numbers are Zabbix's:
// AuthType -1 is the default (RMCP+, IPMI v2.0), 0 none, 1 MD2, 2 MD5,
// 4 straight, 5 OEM, 6 RMCP+; Privilege 1 callback, 2 user (the
// default), 3 operator, 4 admin, 5 OEM. Zabbix 6.0's host.create checks
// neither range (recorded from 6.0.14), so neither does Check: a value
// the IPMI checker cannot use makes its items not supported, saying so.
type HostIPMI struct {
	AuthType  int8
	Privilege uint8
	Username  string
	// Password is a secret: the API never returns it and nothing logs
	// it.
	Password string
}

// DefaultHostIPMI is Zabbix's default: authentication type and
// privilege left to the default (RMCP+, user), no username, no
// password.
var DefaultHostIPMI = HostIPMI{AuthType: -1, Privilege: 2}

// Length limits of the IPMI fields, from the Zabbix 6.0 database schema.
const (
	MaxIPMIUsernameLen = 16
	MaxIPMIPasswordLen = 20
	MaxIPMISensorLen   = 128
)

// IPMIGetKey is the key of the IPMI item that returns every sensor as
// JSON (Zabbix's ipmi.get, the master item of IPMI discovery); it needs
// no ipmi_sensor.
const IPMIGetKey = "ipmi.get"

// IPMIFieldError is a host IPMI field that is too long, as Zabbix 6.0
// words it: `Value "..." is too long for field "ipmi_username" - 17
// characters. Allowed length is 16 characters.`.
type IPMIFieldError struct {
	Field string // "ipmi_username", "ipmi_password" or "ipmi_sensor"
	Value string
	Len   int
	Max   int
}

func (e *IPMIFieldError) Error() string {
	return fmt.Sprintf("Value %q is too long for field %q - %d characters. Allowed length is %d characters.", e.Value, e.Field, e.Len, e.Max)
}

// Check validates p's lengths, naming the offending field.
func (p HostIPMI) Check() error {
	if err := checkIPMILen("ipmi_username", p.Username, MaxIPMIUsernameLen); err != nil {
		return err
	}
	// The value is a secret: the error does not carry it.
	if n := utf8.RuneCountInString(p.Password); n > MaxIPMIPasswordLen || !utf8.ValidString(p.Password) {
		return &IPMIFieldError{Field: "ipmi_password", Value: strings.Repeat("*", min(n, 64)), Len: n, Max: MaxIPMIPasswordLen}
	}
	return nil
}

func checkIPMILen(field, v string, max int) error {
	if !utf8.ValidString(v) {
		return fmt.Errorf("field %q is not valid UTF-8", field)
	}
	if n := utf8.RuneCountInString(v); n > max {
		return &IPMIFieldError{Field: field, Value: v, Len: n, Max: max}
	}
	return nil
}

// ErrIPMISensorRequired is the error of an IPMI item (other than
// ipmi.get) without an ipmi_sensor, in Zabbix 6.0's words (recorded from
// 6.0.14).
//
//lint:ignore ST1005 Zabbix's own words, which the API returns as they are
var ErrIPMISensorRequired = errors.New(`Incorrect value for field "ipmi_sensor": cannot be empty.`)

// checkIPMISensor checks an item's ipmi_sensor: at most 128 characters
// whatever the type (6.0 keeps it on every type), and not empty on an
// IPMI item other than ipmi.get.
func checkIPMISensor(it *Item) error {
	if err := checkIPMILen("ipmi_sensor", it.Ext().IPMISensor, MaxIPMISensorLen); err != nil {
		return err
	}
	if it.Type == IPMI && it.Ext().IPMISensor == "" && it.Key != IPMIGetKey {
		return ErrIPMISensorRequired
	}
	return nil
}

// ipmiSchema holds the IPMI settings (schema version 20). No foreign
// keys, as item_http: the Go side deletes the rows with their host or
// item. IF NOT EXISTS: the migration tests of older versions downgrade
// other tables and leave these.
const ipmiSchema = `
CREATE TABLE IF NOT EXISTS host_ipmi (
	host_id   INTEGER PRIMARY KEY,
	authtype  INTEGER NOT NULL,
	privilege INTEGER NOT NULL,
	username  TEXT NOT NULL,
	password  TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS item_ipmi (
	item_id INTEGER PRIMARY KEY,
	sensor  TEXT NOT NULL
);
`

// migrateIPMI is the migration 19 → 20, kept on its own so that schema
// changes made in parallel renumber cleanly.
func migrateIPMI() string { return ipmiSchema }

// loadIPMI attaches the host_ipmi and item_ipmi rows to their hosts and
// items; hosts without a row get DefaultHostIPMI.
func loadIPMI(ctx context.Context, tx *sql.Tx, hosts []Host, items []Item) error {
	byHost := make(map[uint64]int, len(hosts))
	for i := range hosts {
		loadExt(&hosts[i]).IPMI = DefaultHostIPMI
		byHost[hosts[i].ID] = i
	}
	err := queryEach(ctx, tx, "SELECT host_id, authtype, privilege, username, password FROM host_ipmi", func(r *sql.Rows) error {
		var id uint64
		var auth, priv int64
		var p HostIPMI
		if err := r.Scan(&id, &auth, &priv, &p.Username, &p.Password); err != nil {
			return err
		}
		i, ok := byHost[id]
		if !ok {
			return fmt.Errorf("%w: IPMI settings of unknown host %d", ErrCorrupt, id)
		}
		p.AuthType, p.Privilege = int8(auth), uint8(priv)
		loadExt(&hosts[i]).IPMI = p
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot load host IPMI settings: %w", err)
	}
	var byItem map[uint64]int
	err = queryEach(ctx, tx, "SELECT item_id, sensor FROM item_ipmi", func(r *sql.Rows) error {
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
			return fmt.Errorf("%w: IPMI sensor of unknown item %d", ErrCorrupt, id)
		}
		items[i].MutExt().IPMISensor = s
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot load item IPMI sensors: %w", err)
	}
	return nil
}

// execer is what the IPMI writers need of an Edit or an Apply
// transaction.
type execer func(q string, args ...any) error

// writeHostIPMI stores h's IPMI settings: a row unless they are the
// default.
func writeHostIPMI(exec execer, id uint64, p HostIPMI, had bool) error {
	if had {
		if err := exec("DELETE FROM host_ipmi WHERE host_id = ?", id); err != nil {
			return err
		}
	}
	if p == DefaultHostIPMI {
		return nil
	}
	return exec("INSERT INTO host_ipmi (host_id, authtype, privilege, username, password) VALUES (?, ?, ?, ?, ?)",
		id, int64(p.AuthType), int64(p.Privilege), p.Username, p.Password)
}

// writeItemIPMI stores an item's ipmi_sensor: a row unless it is empty.
func writeItemIPMI(exec execer, id uint64, sensor string, had bool) error {
	if had {
		if err := exec("DELETE FROM item_ipmi WHERE item_id = ?", id); err != nil {
			return err
		}
	}
	if sensor == "" {
		return nil
	}
	return exec("INSERT INTO item_ipmi (item_id, sensor) VALUES (?, ?)", id, sensor)
}

// editExec adapts e.exec to execer.
func (e *Edit) editExec(q string, args ...any) error {
	_, err := e.exec(q, args...)
	return err
}
