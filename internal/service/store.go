package service

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
)

// ErrCorrupt marks a database this package could not have written.
var ErrCorrupt = errors.New("services database is corrupt")

// ErrLocked is returned by Open when another process has the database.
var ErrLocked = errors.New("services database is in use by another process")

const schemaVersion = 1

// schema: services and SLAs are rows of JSON objects with Zabbix's field
// names (read and written whole, as the catalog keeps maintenances);
// services.status is the current status; service_alarms is every status
// change (Zabbix's table of the same name), what status timelines and
// SLIs are computed from. IDs are assigned from service_meta's
// sequences and never reused.
const schema = `
CREATE TABLE service_meta (
	id             INTEGER PRIMARY KEY CHECK (id = 1),
	schema_version INTEGER NOT NULL,
	next_service   INTEGER NOT NULL,
	next_sla       INTEGER NOT NULL
);
CREATE TABLE services (
	id     INTEGER PRIMARY KEY,
	config TEXT NOT NULL,
	status INTEGER NOT NULL DEFAULT -1
);
CREATE TABLE slas (
	id     INTEGER PRIMARY KEY,
	config TEXT NOT NULL
);
CREATE TABLE service_alarms (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	service_id INTEGER NOT NULL,
	clock      INTEGER NOT NULL,
	value      INTEGER NOT NULL
);
CREATE INDEX service_alarms_service ON service_alarms (service_id, clock);
CREATE INDEX service_alarms_clock ON service_alarms (clock);
`

// SQLSchema is the store's schema for sqlitedb (peregrine ha migrate
// copies a data directory's database into PostgreSQL with it).
func SQLSchema() sqlitedb.Schema { return dbSchema }

var dbSchema = sqlitedb.Schema{
	Kind:       "services database",
	Meta:       "service_meta",
	Version:    schemaVersion,
	Create:     schema,
	PGName:     "services",
	InsertMeta: "INSERT INTO service_meta (id, schema_version, next_service, next_sla) VALUES (1, ?, 1, 1)",
	Corrupt:    ErrCorrupt,
	Pragmas:    []string{"journal_size_limit(16777216)"},
}

// Alarm is one status change of a service.
type Alarm struct {
	ServiceID uint64
	Clock     int64
	Value     int
}

// db is the services database.
type db struct {
	sql   *sql.DB
	begin sqlitedb.Begin // a write transaction: fenced first on PostgreSQL
	lock  *os.File       // the SQLite file's lock; nil on PostgreSQL
}

func openDB(ctx context.Context, path string, pg *sqlitedb.PG) (*db, error) {
	lock, s, begin, err := sqlitedb.OpenStore(ctx, pg, path, "services", ErrLocked, dbSchema)
	if err != nil {
		return nil, err
	}
	return &db{sql: s, begin: begin, lock: lock}, nil
}

func (d *db) close() error {
	err := d.sql.Close()
	d.lock.Close()
	return err
}

// load reads the configuration and the current statuses.
func (d *db) load(ctx context.Context) (*Config, map[uint64]int, error) {
	c := &Config{}
	status := map[uint64]int{}
	err := d.sql.QueryRowContext(ctx, "SELECT next_service, next_sla FROM service_meta WHERE id = 1").Scan(&c.NextServiceID, &c.NextSLAID)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read the services database's sequences: %w", err)
	}
	rows, err := d.sql.QueryContext(ctx, "SELECT id, config, status FROM services ORDER BY id")
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read services: %w", err)
	}
	for rows.Next() {
		var s Service
		var text string
		var st int
		if err := rows.Scan(&s.ID, &text, &st); err != nil {
			rows.Close()
			return nil, nil, fmt.Errorf("cannot read services: %w", err)
		}
		if err := json.Unmarshal([]byte(text), &s); err != nil {
			rows.Close()
			return nil, nil, fmt.Errorf("%w: service %d: %v", ErrCorrupt, s.ID, err)
		}
		c.Services = append(c.Services, s)
		status[s.ID] = st
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("cannot read services: %w", err)
	}
	rows, err = d.sql.QueryContext(ctx, "SELECT id, config FROM slas ORDER BY id")
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read SLAs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s SLA
		var text string
		if err := rows.Scan(&s.ID, &text); err != nil {
			return nil, nil, fmt.Errorf("cannot read SLAs: %w", err)
		}
		if err := json.Unmarshal([]byte(text), &s); err != nil {
			return nil, nil, fmt.Errorf("%w: SLA %d: %v", ErrCorrupt, s.ID, err)
		}
		c.SLAs = append(c.SLAs, s)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("cannot read SLAs: %w", err)
	}
	c.index()
	return c, status, nil
}

func encodeJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic("BUG: service configuration does not marshal: " + err.Error())
	}
	return string(b)
}

// write stores, in one transaction, the configuration next (when not
// nil; the rows that differ from old), the statuses that changed and
// the alarms.
func (d *db) write(ctx context.Context, old, next *Config, status map[uint64]int, alarms []Alarm) error {
	tx, err := d.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if next != nil {
		if _, err := tx.ExecContext(ctx, "UPDATE service_meta SET next_service = ?, next_sla = ? WHERE id = 1", next.NextServiceID, next.NextSLAID); err != nil {
			return err
		}
		for i := range old.Services {
			if next.Service(old.Services[i].ID) == nil {
				id := old.Services[i].ID
				if _, err := tx.ExecContext(ctx, "DELETE FROM services WHERE id = ?", id); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, "DELETE FROM service_alarms WHERE service_id = ?", id); err != nil {
					return err
				}
			}
		}
		for i := range next.Services {
			s := &next.Services[i]
			if o := old.Service(s.ID); o != nil && sameService(o, s) {
				continue
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO services (id, config, status) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET config = excluded.config",
				s.ID, encodeJSON(s), StatusOK); err != nil {
				return err
			}
		}
		for i := range old.SLAs {
			if next.SLA(old.SLAs[i].ID) == nil {
				if _, err := tx.ExecContext(ctx, "DELETE FROM slas WHERE id = ?", old.SLAs[i].ID); err != nil {
					return err
				}
			}
		}
		for i := range next.SLAs {
			s := &next.SLAs[i]
			if o := old.SLA(s.ID); o != nil && encodeJSON(o) == encodeJSON(s) {
				continue
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO slas (id, config) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET config = excluded.config",
				s.ID, encodeJSON(s)); err != nil {
				return err
			}
		}
	}
	for id, st := range status {
		if _, err := tx.ExecContext(ctx, "UPDATE services SET status = ? WHERE id = ?", st, id); err != nil {
			return err
		}
	}
	for _, a := range alarms {
		if _, err := tx.ExecContext(ctx, "INSERT INTO service_alarms (service_id, clock, value) VALUES (?, ?, ?)", a.ServiceID, a.Clock, a.Value); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func sameService(a, b *Service) bool {
	return a.UUID == b.UUID && a.Name == b.Name && a.Algorithm == b.Algorithm && a.SortOrder == b.SortOrder &&
		a.Weight == b.Weight && a.PropagationRule == b.PropagationRule && a.PropagationValue == b.PropagationValue &&
		a.Description == b.Description && a.CreatedAt == b.CreatedAt && slices.Equal(a.Children, b.Children) &&
		slices.Equal(a.Tags, b.Tags) && slices.Equal(a.ProblemTags, b.ProblemTags) && slices.Equal(a.StatusRules, b.StatusRules)
}

// Timeline is a service's status over one period: the status at its
// start and the changes inside it, oldest first.
type Timeline struct {
	StartValue int
	Alarms     []Alarm
}

// timelines reads service id's status over each period [From, To).
func (d *db) timelines(ctx context.Context, id uint64, periods []Period) ([]Timeline, error) {
	out := make([]Timeline, len(periods))
	if len(periods) == 0 {
		return out, nil
	}
	lo, hi := periods[0].From, periods[0].To
	for _, p := range periods {
		lo, hi = min(lo, p.From), max(hi, p.To)
	}
	start := StatusOK
	err := d.sql.QueryRowContext(ctx, "SELECT value FROM service_alarms WHERE service_id = ? AND clock < ? ORDER BY clock DESC, id DESC LIMIT 1", id, lo).Scan(&start)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	rows, err := d.sql.QueryContext(ctx, "SELECT clock, value FROM service_alarms WHERE service_id = ? AND clock >= ? AND clock < ? ORDER BY clock, id", id, lo, hi)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var all []Alarm
	for rows.Next() {
		a := Alarm{ServiceID: id}
		if err := rows.Scan(&a.Clock, &a.Value); err != nil {
			return nil, err
		}
		all = append(all, a)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i, p := range periods {
		t := Timeline{StartValue: start}
		for _, a := range all {
			switch {
			case a.Clock < p.From:
				t.StartValue = a.Value
			case a.Clock < p.To:
				t.Alarms = append(t.Alarms, a)
			}
		}
		out[i] = t
	}
	return out, nil
}

// expire deletes the alarms before clock.
func (d *db) expire(ctx context.Context, clock int64) (int64, error) {
	tx, err := d.begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	r, err := tx.ExecContext(ctx, "DELETE FROM service_alarms WHERE clock < ?", clock)
	if err != nil {
		return 0, err
	}
	n, err := r.RowsAffected()
	if err != nil {
		return 0, err
	}
	return n, tx.Commit()
}
