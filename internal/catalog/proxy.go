package catalog

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
)

// Zabbix proxies (the API's proxy.*; schema version 29): a proxy is a
// named zabbix_proxy that monitors the hosts whose Host.ProxyID names
// it. An active proxy (status 5) connects to the trapper and asks for
// its configuration; a passive one (status 6) is connected to on its
// interface. Proxies live in a table of their own and a host's proxy in
// host_proxy (a row only for hosts behind one), so that the hosts table
// and the statements every other change writes it with stay as they
// were. Proxy IDs come from the proxies table's own sequence (in 6.0 a
// proxy is a row of hosts; no API field takes both kinds of ID).

// Proxy statuses, with Zabbix 6.0's numbers.
const (
	ProxyActive  = 5
	ProxyPassive = 6
)

// ProxyInterface is where a passive proxy listens.
type ProxyInterface struct {
	ID    uint64
	UseIP bool
	IP    string
	DNS   string
	Port  string
}

// Address returns host:port to connect to.
func (i ProxyInterface) Address() string {
	h := i.DNS
	if i.UseIP {
		h = i.IP
	}
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	return h + ":" + i.Port
}

// Proxy is a Zabbix proxy. It MUST NOT be modified.
type Proxy struct {
	ID          uint64
	Name        string // Zabbix's host: what the proxy sends as "host"
	Status      int    // ProxyActive or ProxyPassive
	Description string
	// TLS: Connect is how Peregrine connects to a passive proxy, Accept
	// what it accepts from an active one; the PSK is a secret, never
	// returned by the API.
	TLS HostTLS
	// Address is 6.0's proxy_address: a comma-separated list of the
	// addresses an active proxy may connect from ("" for any).
	Address      string
	AutoCompress bool
	// Interface is a passive proxy's (zero for an active one).
	Interface ProxyInterface
	// LastAccess is 6.0's lastaccess as last saved (SaveProxyLastAccess),
	// Unix seconds: the value when the catalog was opened. The live value
	// is the trapper's; edits never change it.
	LastAccess int64
}

// proxySchema holds the proxies and hosts' proxies (schema version 29).
// IF NOT EXISTS: older versions' migration tests leave these alone.
const proxySchema = `
CREATE TABLE IF NOT EXISTS proxies (
	id            INTEGER PRIMARY KEY AUTOINCREMENT,
	name          TEXT NOT NULL UNIQUE,
	status        INTEGER NOT NULL,
	description   TEXT NOT NULL,
	tls_connect   INTEGER NOT NULL,
	tls_accept    INTEGER NOT NULL,
	tls_issuer    TEXT NOT NULL,
	tls_subject   TEXT NOT NULL,
	tls_psk_identity TEXT NOT NULL,
	tls_psk       TEXT NOT NULL,
	address       TEXT NOT NULL,
	auto_compress INTEGER NOT NULL,
	iface_id      INTEGER NOT NULL,
	iface_useip   INTEGER NOT NULL,
	iface_ip      TEXT NOT NULL,
	iface_dns     TEXT NOT NULL,
	iface_port    TEXT NOT NULL,
	lastaccess    INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS host_proxy (
	host_id  INTEGER PRIMARY KEY,
	proxy_id INTEGER NOT NULL
);
`

// migrateProxies is the migration 28 → 29, kept on its own so that
// schema changes made in parallel renumber cleanly.
func migrateProxies() string { return proxySchema }

// Proxies returns the proxies ascending by ID; shared and read-only.
func (s *Snapshot) Proxies() []Proxy { return s.proxies }

// Proxy returns the proxy with the ID, or nil.
func (s *Snapshot) Proxy(id uint64) *Proxy {
	i, ok := slices.BinarySearchFunc(s.proxies, id, func(p Proxy, id uint64) int { return cmp.Compare(p.ID, id) })
	if !ok {
		return nil
	}
	return &s.proxies[i]
}

// ProxyByName returns the proxy with the name, or nil.
func (s *Snapshot) ProxyByName(name string) *Proxy {
	for i := range s.proxies {
		if s.proxies[i].Name == name {
			return &s.proxies[i]
		}
	}
	return nil
}

// ProxyHosts returns the hosts monitored by proxy id, by name.
func (s *Snapshot) ProxyHosts(id uint64) []*Host {
	var out []*Host
	for i := range s.hosts {
		if s.hosts[i].ProxyID == id {
			out = append(out, s.hosts[i])
		}
	}
	return out
}

// ProxyPSKKey returns the key of the proxy with the PSK identity, if one
// has it; the newest proxy wins, as for hosts.
func (s *Snapshot) ProxyPSKKey(identity string) ([]byte, bool) {
	for i := len(s.proxies) - 1; i >= 0; i-- {
		if k, ok := s.proxies[i].TLS.PSKKey(); ok && k.Identity == identity {
			return k.Secret, true
		}
	}
	return nil, false
}

func loadProxies(ctx context.Context, tx *sql.Tx, hosts []*Host) ([]Proxy, error) {
	var out []Proxy
	err := queryEach(ctx, tx, `SELECT id, name, status, description, tls_connect, tls_accept, tls_issuer, tls_subject,
		tls_psk_identity, tls_psk, address, auto_compress, iface_id, iface_useip, iface_ip, iface_dns, iface_port, lastaccess FROM proxies ORDER BY id`, func(r *sql.Rows) error {
		var p Proxy
		var psk string
		if err := r.Scan(&p.ID, &p.Name, &p.Status, &p.Description, &p.TLS.Connect, &p.TLS.Accept, &p.TLS.Issuer, &p.TLS.Subject,
			&p.TLS.PSKIdentity, &psk, &p.Address, &p.AutoCompress, &p.Interface.ID, &p.Interface.UseIP, &p.Interface.IP, &p.Interface.DNS, &p.Interface.Port, &p.LastAccess); err != nil {
			return err
		}
		p.TLS.PSK = zbxpsk.Secret(psk)
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot load proxies: %w", err)
	}
	byHost := make(map[uint64]int, len(hosts))
	for i := range hosts {
		byHost[hosts[i].ID] = i
	}
	err = queryEach(ctx, tx, "SELECT host_id, proxy_id FROM host_proxy", func(r *sql.Rows) error {
		var h, p uint64
		if err := r.Scan(&h, &p); err != nil {
			return err
		}
		if i, ok := byHost[h]; ok {
			hosts[i].ProxyID = p
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot load hosts' proxies: %w", err)
	}
	return out, nil
}

// ProxyExistsError is the conflict of a proxy name taken, in 6.0's words.
type ProxyExistsError struct{ Name string }

func (e *ProxyExistsError) Error() string { return fmt.Sprintf("Proxy %q already exists.", e.Name) }

// ProxyInUseError refuses deleting a proxy that monitors hosts, in
// 6.0's words (recorded from 6.0.14).
type ProxyInUseError struct{ Host, Proxy string }

func (e *ProxyInUseError) Error() string {
	return fmt.Sprintf("Host %q is monitored by proxy %q.", e.Host, e.Proxy)
}

// ProxyUpdate changes the fields of proxy ID that are set.
type ProxyUpdate struct {
	ID           uint64
	Name         *string
	Status       *int
	Description  *string
	TLS          *HostTLSPatch
	Address      *string
	AutoCompress *bool
	Interface    *ProxyInterface
}

func (e *Edit) proxies() []Proxy {
	if e.px == nil {
		e.px = slices.Clone(e.old.proxies)
		if e.px == nil {
			e.px = []Proxy{}
		}
	}
	return e.px
}

func (e *Edit) proxyIndex(id uint64) int {
	return slices.IndexFunc(e.proxies(), func(p Proxy) bool { return p.ID == id })
}

// ProxyByID returns the proxy as this Edit has it, or nil.
func (e *Edit) ProxyByID(id uint64) *Proxy {
	if i := e.proxyIndex(id); i >= 0 {
		return &e.proxies()[i]
	}
	return nil
}

func checkProxy(p string, x *Proxy, el *errList) {
	if x.Status != ProxyActive && x.Status != ProxyPassive {
		el.addf(p+".status", "must be 5 (active) or 6 (passive), not %d", x.Status)
	}
	if err := x.TLS.CheckSupported(); err != nil {
		el.add(p+".tls", err)
	}
	if len(x.Address) > 255 {
		el.addf(p+".proxy_address", "is longer than 255 characters")
	}
}

func (e *Edit) writeProxy(x *Proxy, insert bool) (uint64, error) {
	args := []any{x.Name, x.Status, x.Description, x.TLS.Connect, x.TLS.Accept, x.TLS.Issuer, x.TLS.Subject, x.TLS.PSKIdentity, string(x.TLS.PSK),
		x.Address, x.AutoCompress, x.Interface.ID, x.Interface.UseIP, x.Interface.IP, x.Interface.DNS, x.Interface.Port}
	if insert {
		return e.exec(`INSERT INTO proxies (name, status, description, tls_connect, tls_accept, tls_issuer, tls_subject, tls_psk_identity, tls_psk,
			address, auto_compress, iface_id, iface_useip, iface_ip, iface_dns, iface_port) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, args...)
	}
	return e.exec(`UPDATE proxies SET name = ?, status = ?, description = ?, tls_connect = ?, tls_accept = ?, tls_issuer = ?, tls_subject = ?,
		tls_psk_identity = ?, tls_psk = ?, address = ?, auto_compress = ?, iface_id = ?, iface_useip = ?, iface_ip = ?, iface_dns = ?, iface_port = ?
		WHERE id = ?`, append(args, x.ID)...)
}

func (e *Edit) proxyNameTaken(name string, except uint64) bool {
	return slices.ContainsFunc(e.proxies(), func(p Proxy) bool { return p.Name == name && p.ID != except })
}

// CreateProxies creates proxies and returns their IDs in order.
func (e *Edit) CreateProxies(ps []Proxy) ([]uint64, error) {
	if e.err != nil {
		return nil, e.err
	}
	var el errList
	for i := range ps {
		p := "proxies[" + strconv.Itoa(i) + "]"
		checkProxy(p, &ps[i], &el)
		if e.proxyNameTaken(ps[i].Name, 0) || slices.ContainsFunc(ps[:i], func(o Proxy) bool { return o.Name == ps[i].Name }) {
			el.add(p+".host", &ProxyExistsError{Name: ps[i].Name})
		}
	}
	if err := el.err(); err != nil {
		return nil, err
	}
	ids := make([]uint64, len(ps))
	for i := range ps {
		x := ps[i]
		x.TLS = cloneTLS(x.TLS)
		id, err := e.writeProxy(&x, true)
		if err != nil {
			return nil, e.fail(fmt.Errorf("cannot insert proxy %q: %w", x.Name, err))
		}
		x.ID, ids[i] = id, id
		if x.Status == ProxyPassive && x.Interface.ID == 0 {
			x.Interface.ID = id
			if _, err := e.writeProxy(&x, false); err != nil {
				return nil, e.fail(err)
			}
		}
		e.px = append(e.proxies(), x)
	}
	return ids, nil
}

// UpdateProxies changes proxies by ID.
func (e *Edit) UpdateProxies(ups []ProxyUpdate) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	next := make([]Proxy, len(ups))
	ids := make([]uint64, len(ups))
	for i, u := range ups {
		p := "proxies[" + strconv.Itoa(i) + "]"
		ids[i] = u.ID
		j := e.proxyIndex(u.ID)
		if j < 0 {
			el.add(p+".proxyid", notFound("proxy", u.ID))
			continue
		}
		n := e.proxies()[j]
		if u.Name != nil {
			n.Name = *u.Name
		}
		if u.Status != nil {
			n.Status = *u.Status
		}
		if u.Description != nil {
			n.Description = *u.Description
		}
		if u.TLS != nil {
			n.TLS = cloneTLS(u.TLS.apply(n.TLS))
		}
		if u.Address != nil {
			n.Address = *u.Address
		}
		if u.AutoCompress != nil {
			n.AutoCompress = *u.AutoCompress
		}
		if u.Interface != nil {
			iid := n.Interface.ID
			n.Interface = *u.Interface
			if n.Interface.ID == 0 {
				n.Interface.ID = cmp.Or(iid, n.ID)
			}
		}
		checkProxy(p, &n, &el)
		if e.proxyNameTaken(n.Name, n.ID) || slices.ContainsFunc(next[:i], func(o Proxy) bool { return o.Name == n.Name && o.ID != n.ID }) {
			el.add(p+".host", &ProxyExistsError{Name: n.Name})
		}
		next[i] = n
	}
	dupIDs("proxies", ids, &el)
	if err := el.err(); err != nil {
		return err
	}
	for i := range next {
		if _, err := e.writeProxy(&next[i], false); err != nil {
			return e.fail(fmt.Errorf("cannot update proxy %q: %w", next[i].Name, err))
		}
		e.proxies()[e.proxyIndex(next[i].ID)] = next[i]
	}
	return nil
}

// DeleteProxies deletes proxies by ID; a proxy that monitors a host is
// refused (ProxyInUseError), as 6.0 refuses it.
func (e *Edit) DeleteProxies(ids []uint64) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	for i, id := range ids {
		p := "proxies[" + strconv.Itoa(i) + "]"
		j := e.proxyIndex(id)
		if j < 0 {
			el.add(p, notFound("proxy", id))
			continue
		}
		e.eachHost(func(h *Host) bool {
			if h.ProxyID == id {
				el.add(p, &ProxyInUseError{Host: h.Host, Proxy: e.proxies()[j].Name})
				return false
			}
			return true
		})
	}
	dupIDs("proxies", ids, &el)
	if err := el.err(); err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := e.exec("DELETE FROM proxies WHERE id = ?", id); err != nil {
			return e.fail(fmt.Errorf("cannot delete proxy %d: %w", id, err))
		}
		j := e.proxyIndex(id)
		e.px = slices.Delete(e.proxies(), j, j+1)
	}
	return nil
}

// SetHostsProxy makes proxy (0: none, the server) monitor the hosts.
func (e *Edit) SetHostsProxy(hostIDs []uint64, proxy uint64) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	if proxy != 0 && e.proxyIndex(proxy) < 0 {
		el.add("proxy_hostid", notFound("proxy", proxy))
	}
	for i, id := range hostIDs {
		if h := e.host(id); h == nil || h.IsTemplate {
			el.add("hosts["+strconv.Itoa(i)+"]", notFound("host", id))
		}
	}
	if err := el.err(); err != nil {
		return err
	}
	if e.hosts == nil {
		e.hosts = map[uint64]*Host{}
	}
	for _, id := range hostIDs {
		if e.host(id).ProxyID == proxy {
			continue
		}
		var err error
		if proxy == 0 {
			_, err = e.exec("DELETE FROM host_proxy WHERE host_id = ?", id)
		} else {
			_, err = e.exec("INSERT OR REPLACE INTO host_proxy (host_id, proxy_id) VALUES (?, ?)", id, proxy)
		}
		if err != nil {
			return e.fail(fmt.Errorf("cannot set host %d's proxy: %w", id, err))
		}
		e.editableHost(id).ProxyID = proxy
		e.res.HostsUpdated++
	}
	return nil
}

// buildProxies installs the Edit's proxies, if it changed any, into s.
func (e *Edit) buildProxies(s *Snapshot) {
	if e.px == nil {
		return
	}
	s.proxies = slices.Clone(e.px)
	slices.SortFunc(s.proxies, func(a, b Proxy) int { return cmp.Compare(a.ID, b.ID) })
	if len(s.proxies) == 0 {
		s.proxies = nil
	}
}

// SaveProxyLastAccess stores proxies' lastaccess (Unix seconds, by
// proxy ID) so that it survives a restart; IDs of deleted proxies are
// skipped. It writes outside any Edit: no revision, no new snapshot.
func (c *Catalog) SaveProxyLastAccess(ctx context.Context, last map[uint64]int64) error {
	if len(last) == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	tx, err := c.begin(ctx)
	if err != nil {
		return fmt.Errorf("catalog: cannot save proxies' lastaccess: %w", err)
	}
	defer tx.Rollback()
	for id, t := range last {
		if _, err := tx.ExecContext(ctx, "UPDATE proxies SET lastaccess = ? WHERE id = ? AND lastaccess < ?", t, id, t); err != nil {
			return fmt.Errorf("catalog: cannot save proxy %d's lastaccess: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("catalog: cannot save proxies' lastaccess: %w", err)
	}
	return nil
}
