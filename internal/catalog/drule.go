package catalog

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
)

// Network discovery (the API's drule.*, dcheck.get, dhost.get,
// dservice.get): discovery rules with their checks, and what the
// discoverer found (discovered hosts and services). Both live outside
// the snapshot, each published as an immutable value of its own (like
// the autoregistration settings): the rules change through the API,
// the discovered state after every address the discoverer checked, and
// neither touches hosts or items. The API validates rules; the catalog
// stores them.

// Check types of discovery rules (Zabbix's dchecks.type).
const (
	DCheckSSH    = 0
	DCheckLDAP   = 1
	DCheckSMTP   = 2
	DCheckFTP    = 3
	DCheckHTTP   = 4
	DCheckPOP    = 5
	DCheckNNTP   = 6
	DCheckIMAP   = 7
	DCheckTCP    = 8
	DCheckAgent  = 9
	DCheckSNMPv1 = 10
	DCheckSNMPv2 = 11
	DCheckICMP   = 12
	DCheckSNMPv3 = 13
	DCheckHTTPS  = 14
	DCheckTelnet = 15
)

// Condition types of discovery actions (with CondProxy).
const (
	CondDHostIP      = 7
	CondDServiceType = 8
	CondDServicePort = 9
	CondDStatus      = 10
	CondDUptime      = 11
	CondDValue       = 12
	CondDRule        = 18
	CondDCheck       = 19
	CondDObject      = 21
)

// Statuses of discovered hosts and services (dhosts.status,
// dservices.status) and the values of discovery events.
const (
	DStatusUp       = 0
	DStatusDown     = 1
	DStatusDiscover = 2 // events only
	DStatusLost     = 3 // events only
)

// DCheck is one check of a discovery rule. The SNMPv3 passphrases are
// returned by dcheck.get as 6.0 returns them (recorded from 6.0.14:
// drule.get's selectDChecks shows them).
type DCheck struct {
	ID                   uint64
	DRuleID              uint64
	Type                 int
	Key                  string // key_: the agent key or the SNMP OID
	SNMPCommunity        string
	Ports                string // "0" for ICMP
	SNMPv3SecurityName   string
	SNMPv3SecurityLevel  int
	SNMPv3AuthPassphrase string
	SNMPv3PrivPassphrase string
	SNMPv3AuthProtocol   int
	SNMPv3PrivProtocol   int
	SNMPv3ContextName    string
	Uniq                 bool
	HostSource           int // 1 DNS name, 2 IP, 3 the value of check (HostSource-3 ... see API)
	NameSource           int // 0 not specified, 1 DNS, 2 IP, 3 a check's value
}

// DRule is a discovery rule. It MUST NOT be modified.
type DRule struct {
	ID      uint64
	ProxyID uint64
	Name    string
	IPRange string
	Delay   string // a time unit or a user macro
	Status  int    // 0 enabled, 1 disabled
	Checks  []DCheck
}

// DHost is a discovered host: one per rule and address (or unique
// check value).
type DHost struct {
	ID       uint64
	DRuleID  uint64
	Status   int
	LastUp   int64
	LastDown int64
}

// DService is a discovered service: a check's answer on one address
// and port.
type DService struct {
	ID       uint64
	DHostID  uint64
	DCheckID uint64
	IP       string
	DNS      string
	Port     int
	Value    string
	Status   int
	LastUp   int64
	LastDown int64
}

// DiscoveryState is what the discoverer found, by ID. It MUST NOT be
// modified; SaveDiscovery publishes a new one.
type DiscoveryState struct {
	Hosts    map[uint64]*DHost
	Services map[uint64]*DService
	nextHost uint64
	nextSvc  uint64
}

// druleSchema holds discovery rules, their checks and what they found.
// The default rule "Local network" (ID 2, disabled, one agent check 2)
// is a fresh 6.0's (recorded from 6.0.14: drule.get).
const druleSchema = `
CREATE TABLE IF NOT EXISTS drules (
	id       INTEGER PRIMARY KEY AUTOINCREMENT,
	proxy_id INTEGER NOT NULL,
	name     TEXT NOT NULL UNIQUE,
	iprange  TEXT NOT NULL,
	delay    TEXT NOT NULL,
	status   INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS dchecks (
	id       INTEGER PRIMARY KEY AUTOINCREMENT,
	drule_id INTEGER NOT NULL,
	type     INTEGER NOT NULL,
	key_     TEXT NOT NULL,
	snmp_community TEXT NOT NULL,
	ports    TEXT NOT NULL,
	snmpv3_securityname  TEXT NOT NULL,
	snmpv3_securitylevel INTEGER NOT NULL,
	snmpv3_authpassphrase TEXT NOT NULL,
	snmpv3_privpassphrase TEXT NOT NULL,
	snmpv3_authprotocol  INTEGER NOT NULL,
	snmpv3_privprotocol  INTEGER NOT NULL,
	snmpv3_contextname   TEXT NOT NULL,
	uniq        INTEGER NOT NULL,
	host_source INTEGER NOT NULL,
	name_source INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS dhosts (
	id       INTEGER PRIMARY KEY,
	drule_id INTEGER NOT NULL,
	status   INTEGER NOT NULL,
	lastup   INTEGER NOT NULL,
	lastdown INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS dservices (
	id        INTEGER PRIMARY KEY,
	dhost_id  INTEGER NOT NULL,
	dcheck_id INTEGER NOT NULL,
	ip        TEXT NOT NULL,
	dns       TEXT NOT NULL,
	port      INTEGER NOT NULL,
	value     TEXT NOT NULL,
	status    INTEGER NOT NULL,
	lastup    INTEGER NOT NULL,
	lastdown  INTEGER NOT NULL
);
INSERT OR IGNORE INTO drules (id, proxy_id, name, iprange, delay, status) VALUES (2, 0, 'Local network', '192.168.0.1-254', '1h', 1);
INSERT OR IGNORE INTO dchecks (id, drule_id, type, key_, snmp_community, ports, snmpv3_securityname, snmpv3_securitylevel,
	snmpv3_authpassphrase, snmpv3_privpassphrase, snmpv3_authprotocol, snmpv3_privprotocol, snmpv3_contextname, uniq, host_source, name_source)
	VALUES (2, 2, 9, 'system.uname', '', '10050', '', 0, '', '', 0, 0, '', 0, 1, 0);
`

// migrateDRules is the migration to the schema with network discovery,
// kept on its own so that schema changes made in parallel renumber
// cleanly.
func migrateDRules() string { return druleSchema }

// DRules returns the discovery rules by ID; shared and read-only.
func (c *Catalog) DRules() []DRule {
	if p := c.drules.Load(); p != nil {
		return *p
	}
	return nil
}

// DRule returns the rule with the ID, or nil.
func (c *Catalog) DRule(id uint64) *DRule {
	rs := c.DRules()
	i, ok := slices.BinarySearchFunc(rs, id, func(r DRule, id uint64) int { return cmp.Compare(r.ID, id) })
	if !ok {
		return nil
	}
	return &rs[i]
}

// Discovery returns what the discoverer found; never nil.
func (c *Catalog) Discovery() *DiscoveryState {
	if p := c.dstate.Load(); p != nil {
		return p
	}
	return &DiscoveryState{Hosts: map[uint64]*DHost{}, Services: map[uint64]*DService{}}
}

// DRuleExistsError is 6.0's refusal of a rule name taken.
type DRuleExistsError struct{ Name string }

func (e *DRuleExistsError) Error() string {
	return fmt.Sprintf("Discovery rule %q already exists.", e.Name)
}

// SaveDRules creates (ID 0) and replaces (ID set) discovery rules, each
// with its whole list of checks (a check with ID 0 is new; a check the
// rule had and the list lacks is deleted with its services), and
// deletes the rules named in del with what they found; it returns the
// IDs of the rules in order. Names must be unique (DRuleExistsError);
// everything else is the caller's to check. Writers are serialised
// with Edit.
func (c *Catalog) SaveDRules(ctx context.Context, rules []DRule, del []uint64) ([]uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	cur := slices.Clone(c.DRules())
	cur = slices.DeleteFunc(cur, func(r DRule) bool { return slices.Contains(del, r.ID) })
	for i := range rules {
		for j := range cur {
			if cur[j].Name == rules[i].Name && cur[j].ID != rules[i].ID {
				return nil, &DRuleExistsError{Name: rules[i].Name}
			}
		}
		for j := range rules[:i] {
			if rules[j].Name == rules[i].Name {
				return nil, &DRuleExistsError{Name: rules[i].Name}
			}
		}
	}
	tx, err := c.begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("catalog: cannot save discovery rules: %w", err)
	}
	defer tx.Rollback()
	st := c.Discovery()
	var goneChecks []uint64
	for _, id := range del {
		r := c.DRule(id)
		if r == nil {
			continue
		}
		for _, ck := range r.Checks {
			goneChecks = append(goneChecks, ck.ID)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM drules WHERE id = ?", id); err != nil {
			return nil, fmt.Errorf("catalog: cannot delete discovery rule %d: %w", id, err)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM dchecks WHERE drule_id = ?", id); err != nil {
			return nil, fmt.Errorf("catalog: cannot delete discovery rule %d: %w", id, err)
		}
	}
	ids := make([]uint64, len(rules))
	for i := range rules {
		r := rules[i]
		r.Checks = slices.Clone(r.Checks)
		if r.ID == 0 {
			res, err := tx.ExecContext(ctx, "INSERT INTO drules (proxy_id, name, iprange, delay, status) VALUES (?,?,?,?,?)",
				r.ProxyID, r.Name, r.IPRange, r.Delay, r.Status)
			if err != nil {
				return nil, fmt.Errorf("catalog: cannot insert discovery rule %q: %w", r.Name, err)
			}
			n, _ := res.LastInsertId()
			r.ID = uint64(n)
		} else {
			old := c.DRule(r.ID)
			if old == nil {
				return nil, notFound("discovery rule", r.ID)
			}
			if _, err := tx.ExecContext(ctx, "UPDATE drules SET proxy_id = ?, name = ?, iprange = ?, delay = ?, status = ? WHERE id = ?",
				r.ProxyID, r.Name, r.IPRange, r.Delay, r.Status, r.ID); err != nil {
				return nil, fmt.Errorf("catalog: cannot update discovery rule %q: %w", r.Name, err)
			}
			for _, ck := range old.Checks {
				if !slices.ContainsFunc(r.Checks, func(n DCheck) bool { return n.ID == ck.ID }) {
					goneChecks = append(goneChecks, ck.ID)
					if _, err := tx.ExecContext(ctx, "DELETE FROM dchecks WHERE id = ?", ck.ID); err != nil {
						return nil, fmt.Errorf("catalog: cannot delete check %d: %w", ck.ID, err)
					}
				}
			}
		}
		for j := range r.Checks {
			ck := &r.Checks[j]
			ck.DRuleID = r.ID
			args := []any{ck.DRuleID, ck.Type, ck.Key, ck.SNMPCommunity, ck.Ports, ck.SNMPv3SecurityName, ck.SNMPv3SecurityLevel,
				ck.SNMPv3AuthPassphrase, ck.SNMPv3PrivPassphrase, ck.SNMPv3AuthProtocol, ck.SNMPv3PrivProtocol, ck.SNMPv3ContextName,
				ck.Uniq, ck.HostSource, ck.NameSource}
			if ck.ID == 0 {
				res, err := tx.ExecContext(ctx, `INSERT INTO dchecks (drule_id, type, key_, snmp_community, ports, snmpv3_securityname,
					snmpv3_securitylevel, snmpv3_authpassphrase, snmpv3_privpassphrase, snmpv3_authprotocol, snmpv3_privprotocol,
					snmpv3_contextname, uniq, host_source, name_source) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, args...)
				if err != nil {
					return nil, fmt.Errorf("catalog: cannot insert a check of %q: %w", r.Name, err)
				}
				n, _ := res.LastInsertId()
				ck.ID = uint64(n)
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE dchecks SET drule_id = ?, type = ?, key_ = ?, snmp_community = ?, ports = ?,
				snmpv3_securityname = ?, snmpv3_securitylevel = ?, snmpv3_authpassphrase = ?, snmpv3_privpassphrase = ?,
				snmpv3_authprotocol = ?, snmpv3_privprotocol = ?, snmpv3_contextname = ?, uniq = ?, host_source = ?, name_source = ?
				WHERE id = ?`, append(args, ck.ID)...); err != nil {
				return nil, fmt.Errorf("catalog: cannot update check %d: %w", ck.ID, err)
			}
		}
		ids[i] = r.ID
		if k := slices.IndexFunc(cur, func(o DRule) bool { return o.ID == r.ID }); k >= 0 {
			cur[k] = r
		} else {
			cur = append(cur, r)
		}
	}
	// What the deleted rules and checks found goes with them.
	next := st.clone()
	for id, h := range st.Hosts {
		if slices.Contains(del, h.DRuleID) {
			delete(next.Hosts, id)
		}
	}
	for id, s := range st.Services {
		if slices.Contains(goneChecks, s.DCheckID) || next.Hosts[s.DHostID] == nil {
			delete(next.Services, id)
		}
	}
	if err := writeDiscoveryDiff(ctx, tx, st, next); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("catalog: cannot save discovery rules: %w", err)
	}
	slices.SortFunc(cur, func(a, b DRule) int { return cmp.Compare(a.ID, b.ID) })
	c.drules.Store(&cur)
	c.dstate.Store(next)
	return ids, nil
}

func (s *DiscoveryState) clone() *DiscoveryState {
	n := &DiscoveryState{Hosts: make(map[uint64]*DHost, len(s.Hosts)), Services: make(map[uint64]*DService, len(s.Services)),
		nextHost: s.nextHost, nextSvc: s.nextSvc}
	for k, v := range s.Hosts {
		n.Hosts[k] = v
	}
	for k, v := range s.Services {
		n.Services[k] = v
	}
	return n
}

// DiscoveryChange is what one pass of the discoverer changed: hosts and
// services new (ID 0: SaveDiscovery numbers them) or changed, and those
// gone.
type DiscoveryChange struct {
	Hosts       []*DHost
	Services    []*DService
	DelHosts    []uint64
	DelServices []uint64
}

// NewDHostID and NewDServiceID hand out IDs for a discoverer's new
// hosts and services before they are saved: events name them first.
// They come from the published state's counters, under the catalog's
// writer lock.
func (c *Catalog) NewDHostID() uint64 { return c.nextDiscoveryID(true) }

// NewDServiceID: see NewDHostID.
func (c *Catalog) NewDServiceID() uint64 { return c.nextDiscoveryID(false) }

func (c *Catalog) nextDiscoveryID(host bool) uint64 {
	c.dmu.Lock()
	defer c.dmu.Unlock()
	if c.dnext[0] == 0 {
		st := c.Discovery()
		c.dnext = [2]uint64{st.nextHost, st.nextSvc}
	}
	k := 1
	if host {
		k = 0
	}
	c.dnext[k]++
	return c.dnext[k]
}

// SaveDiscovery stores and publishes what the discoverer changed. It
// writes outside any Edit: no revision, no new snapshot. Services of a
// rule or check deleted meanwhile are dropped.
func (c *Catalog) SaveDiscovery(ctx context.Context, ch DiscoveryChange) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	st := c.Discovery()
	next := st.clone()
	checks := map[uint64]bool{}
	rules := map[uint64]bool{}
	for _, r := range c.DRules() {
		rules[r.ID] = true
		for _, ck := range r.Checks {
			checks[ck.ID] = true
		}
	}
	for _, h := range ch.Hosts {
		if rules[h.DRuleID] {
			cp := *h
			next.Hosts[h.ID] = &cp
			next.nextHost = max(next.nextHost, h.ID)
		}
	}
	for _, s := range ch.Services {
		if checks[s.DCheckID] && next.Hosts[s.DHostID] != nil {
			cp := *s
			next.Services[s.ID] = &cp
			next.nextSvc = max(next.nextSvc, s.ID)
		}
	}
	for _, id := range ch.DelServices {
		delete(next.Services, id)
	}
	for _, id := range ch.DelHosts {
		delete(next.Hosts, id)
	}
	tx, err := c.begin(ctx)
	if err != nil {
		return fmt.Errorf("catalog: cannot save discovered hosts: %w", err)
	}
	defer tx.Rollback()
	if err := writeDiscoveryDiff(ctx, tx, st, next); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("catalog: cannot save discovered hosts: %w", err)
	}
	c.dstate.Store(next)
	return nil
}

// writeDiscoveryDiff writes the rows that differ between old and next.
func writeDiscoveryDiff(ctx context.Context, tx *sql.Tx, old, next *DiscoveryState) error {
	for id, h := range next.Hosts {
		if o := old.Hosts[id]; o != nil && *o == *h {
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO dhosts (id, drule_id, status, lastup, lastdown) VALUES (?,?,?,?,?)
			ON CONFLICT (id) DO UPDATE SET status = excluded.status, lastup = excluded.lastup, lastdown = excluded.lastdown`,
			h.ID, h.DRuleID, h.Status, h.LastUp, h.LastDown); err != nil {
			return fmt.Errorf("catalog: cannot save discovered host %d: %w", id, err)
		}
	}
	for id, s := range next.Services {
		if o := old.Services[id]; o != nil && *o == *s {
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO dservices (id, dhost_id, dcheck_id, ip, dns, port, value, status, lastup, lastdown)
			VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT (id) DO UPDATE SET dhost_id = excluded.dhost_id, dns = excluded.dns,
			value = excluded.value, status = excluded.status, lastup = excluded.lastup, lastdown = excluded.lastdown`,
			s.ID, s.DHostID, s.DCheckID, s.IP, s.DNS, s.Port, s.Value, s.Status, s.LastUp, s.LastDown); err != nil {
			return fmt.Errorf("catalog: cannot save discovered service %d: %w", id, err)
		}
	}
	for id := range old.Hosts {
		if next.Hosts[id] == nil {
			if _, err := tx.ExecContext(ctx, "DELETE FROM dhosts WHERE id = ?", id); err != nil {
				return fmt.Errorf("catalog: cannot delete discovered host %d: %w", id, err)
			}
		}
	}
	for id := range old.Services {
		if next.Services[id] == nil {
			if _, err := tx.ExecContext(ctx, "DELETE FROM dservices WHERE id = ?", id); err != nil {
				return fmt.Errorf("catalog: cannot delete discovered service %d: %w", id, err)
			}
		}
	}
	return nil
}

// loadDRules reads the discovery rules and what they found.
func loadDRules(ctx context.Context, db *sql.DB) ([]DRule, *DiscoveryState, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, nil, err
	}
	defer tx.Rollback()
	var rules []DRule
	idx := map[uint64]int{}
	err = queryEach(ctx, tx, "SELECT id, proxy_id, name, iprange, delay, status FROM drules ORDER BY id", func(r *sql.Rows) error {
		var d DRule
		if err := r.Scan(&d.ID, &d.ProxyID, &d.Name, &d.IPRange, &d.Delay, &d.Status); err != nil {
			return err
		}
		idx[d.ID] = len(rules)
		rules = append(rules, d)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("cannot load discovery rules: %w", err)
	}
	err = queryEach(ctx, tx, `SELECT id, drule_id, type, key_, snmp_community, ports, snmpv3_securityname, snmpv3_securitylevel,
		snmpv3_authpassphrase, snmpv3_privpassphrase, snmpv3_authprotocol, snmpv3_privprotocol, snmpv3_contextname, uniq,
		host_source, name_source FROM dchecks ORDER BY id`, func(r *sql.Rows) error {
		var k DCheck
		if err := r.Scan(&k.ID, &k.DRuleID, &k.Type, &k.Key, &k.SNMPCommunity, &k.Ports, &k.SNMPv3SecurityName, &k.SNMPv3SecurityLevel,
			&k.SNMPv3AuthPassphrase, &k.SNMPv3PrivPassphrase, &k.SNMPv3AuthProtocol, &k.SNMPv3PrivProtocol, &k.SNMPv3ContextName,
			&k.Uniq, &k.HostSource, &k.NameSource); err != nil {
			return err
		}
		if i, ok := idx[k.DRuleID]; ok {
			rules[i].Checks = append(rules[i].Checks, k)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("cannot load discovery checks: %w", err)
	}
	st := &DiscoveryState{Hosts: map[uint64]*DHost{}, Services: map[uint64]*DService{}}
	err = queryEach(ctx, tx, "SELECT id, drule_id, status, lastup, lastdown FROM dhosts", func(r *sql.Rows) error {
		var h DHost
		if err := r.Scan(&h.ID, &h.DRuleID, &h.Status, &h.LastUp, &h.LastDown); err != nil {
			return err
		}
		st.Hosts[h.ID] = &h
		st.nextHost = max(st.nextHost, h.ID)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("cannot load discovered hosts: %w", err)
	}
	err = queryEach(ctx, tx, "SELECT id, dhost_id, dcheck_id, ip, dns, port, value, status, lastup, lastdown FROM dservices", func(r *sql.Rows) error {
		var s DService
		if err := r.Scan(&s.ID, &s.DHostID, &s.DCheckID, &s.IP, &s.DNS, &s.Port, &s.Value, &s.Status, &s.LastUp, &s.LastDown); err != nil {
			return err
		}
		st.Services[s.ID] = &s
		st.nextSvc = max(st.nextSvc, s.ID)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("cannot load discovered services: %w", err)
	}
	return rules, st, nil
}

// HostsWithIP returns the hosts (not templates) with an interface on
// the address, by ID: dservice.get's selectHosts.
func (s *Snapshot) HostsWithIP(ip string) []*Host {
	var out []*Host
	for i := range s.hosts {
		h := s.hosts[i]
		if !h.IsTemplate && slices.ContainsFunc(h.Interfaces, func(f Interface) bool { return f.IP == ip }) {
			out = append(out, h)
		}
	}
	return out
}
