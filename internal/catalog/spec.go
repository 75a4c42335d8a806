package catalog

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/peregrine-mon/peregrine/internal/zbx/delay"
	"github.com/peregrine-mon/peregrine/internal/zbx/snmpoid"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/zbx/itemkey"
)

// Spec is the declarative import document: groups and hosts with their
// items. It is decoded from YAML by LoadSpecFile and ParseSpec and also
// built in code. Empty string fields mean "use the default"; see
// docs/import-format.md for every field.
//
// Apply makes the catalog contain what the Spec describes. It never
// deletes: hosts, items and groups absent from the Spec are left as they
// are.
type Spec struct {
	Groups []GroupSpec `yaml:"groups"`
	Hosts  []HostSpec  `yaml:"hosts"`
	// Macros are global user macros, created or updated by name and
	// context, never deleted.
	Macros []MacroSpec `yaml:"macros"`
	// Templates are created or updated by technical name (see
	// TemplateSpec); ZabbixExport takes a Zabbix export file's top level.
	Templates    []TemplateSpec `yaml:"templates"`
	ZabbixExport *ZabbixExport  `yaml:"zabbix_export"`
}

// GroupSpec declares a host group.
type GroupSpec struct {
	Name string `yaml:"name"`
	// UUID is a Zabbix export's; accepted and not kept (Peregrine's
	// host groups have none).
	UUID string `yaml:"uuid"`
}

// HostSpec declares a host and some of its items.
type HostSpec struct {
	Host   string `yaml:"host"`   // technical name, required
	Name   string `yaml:"name"`   // visible name, default Host
	Status string `yaml:"status"` // "enabled" (default) or "disabled"
	// Groups is the complete list of the host's groups: Apply makes the
	// host's membership equal to it. Groups that do not exist are created.
	Groups []string `yaml:"groups"`
	// Interfaces, if present, is the complete list of the host's
	// interfaces: Apply makes the host's interfaces equal to it, keeping
	// the ID of an interface whose type and address are unchanged. Absent
	// (nil), the host's interfaces are left as they are.
	Interfaces []InterfaceSpec `yaml:"interfaces"`
	Items      []ItemSpec      `yaml:"items"`
	// TLS, if present, sets the host's encryption settings (all of
	// them: a member left out takes its default). Absent, an existing
	// host keeps its settings and a new one is unencrypted both ways.
	TLS *TLSSpec `yaml:"tls"`
	// Triggers are created or updated (matched by name and expression),
	// never deleted; their expressions may reference any host's items.
	Triggers []TriggerSpec `yaml:"triggers"`
	// Macros, if present, is the complete list of the host's user
	// macros; absent, the host keeps its macros.
	Macros []MacroSpec `yaml:"macros"`
	// Templates, if present, is the complete list of the templates
	// linked to the host (by technical name); absent, it keeps its links.
	Templates []TemplateRef `yaml:"templates"`
	// ValueMaps are created or updated by name, never deleted (see
	// ValueMapSpec); items name them with valuemap.
	ValueMaps []ValueMapSpec `yaml:"valuemaps"`
}

// TLSSpec declares a host's encryption settings, Zabbix's host fields
// tls_connect (1 unencrypted, the default; 2 PSK; 4 certificate),
// tls_accept (a sum of those, default 1), tls_issuer, tls_subject, and
// with PSK tls_psk_identity and tls_psk (32 to 512 hexadecimal digits).
type TLSSpec struct {
	Connect     int    `yaml:"connect"`
	Accept      int    `yaml:"accept"`
	Issuer      string `yaml:"issuer"`
	Subject     string `yaml:"subject"`
	PSKIdentity string `yaml:"psk_identity"`
	PSK         string `yaml:"psk"`
}

// InterfaceSpec declares one host interface.
type InterfaceSpec struct {
	Type string `yaml:"type"` // "agent" (default), "snmp", "ipmi", "jmx" or 1..4
	// Main marks the default interface of its type. If no interface of a
	// type is marked, the first one listed is main; two marked is an
	// error.
	Main bool   `yaml:"main"`
	IP   string `yaml:"ip"`
	DNS  string `yaml:"dns"`
	// UseIP selects IP (true) or DNS (false); default true if IP is set,
	// otherwise false.
	UseIP *bool  `yaml:"useip"`
	Port  string `yaml:"port"` // default: the type's port (10050 agent, 161 SNMP)
	// Details are an SNMP interface's settings, as in the Zabbix API:
	// version (1, 2 or 3, required), community (v1 and v2), bulk, and
	// the SNMPv3 ones.
	Details map[string]string `yaml:"details"`
}

// ItemSpec declares one item of a host.
type ItemSpec struct {
	Key       string `yaml:"key"`        // required, Zabbix key syntax
	Name      string `yaml:"name"`       // default Key
	Type      string `yaml:"type"`       // default "trapper"
	ValueType string `yaml:"value_type"` // default "float"
	Units     string `yaml:"units"`      // default ""
	Delay     string `yaml:"delay"`      // default "0" for trappers, "1m" otherwise
	History   string `yaml:"history"`    // default "90d"
	Trends    string `yaml:"trends"`     // default "365d" for numeric items, "0" otherwise
	Status    string `yaml:"status"`     // "enabled" (default) or "disabled"
	// Interface selects the host interface of a polled item by address
	// ("127.0.0.1:10050", as Interface.Addr gives it); default: the
	// host's main interface of the type the item needs (agent for
	// zabbix_agent items), none for other item types.
	Interface string `yaml:"interface"`
	Timeout   string `yaml:"timeout"` // per-check timeout, default "" (the server's)
	// RetryDelay is the retry interval while a trigger of the item is
	// soft (Peregrine's extension, see Item.RetryDelay); default none.
	RetryDelay string `yaml:"retry_delay"`
	// SNMPOID is what an snmp_agent item asks: a numeric OID
	// ("1.3.6.1.2.1.1.3.0"), a known MIB name ("IF-MIB::ifInOctets.1"),
	// a dynamic index or discovery[...] (Zabbix 6.0's forms, see
	// package zbx/snmpoid). Required for snmp_agent items,
	// ignored for the others.
	SNMPOID string `yaml:"snmp_oid"`
	// IPMISensor is what an ipmi item reads: a sensor by id ("CPU
	// Temp", "id:CPU Temp") or full name ("name:(7.1).CPU Temp").
	// Required for ipmi items but ipmi.get, kept on any item (as
	// Zabbix 6.0 keeps it); up to 128 characters.
	IPMISensor string `yaml:"ipmi_sensor"`
	// LogTimeFmt is the item's logtimefmt (up to 64 characters; see
	// Item.LogTimeFmt).
	LogTimeFmt string `yaml:"logtimefmt"`
	// TrapperHosts is the item's allowed hosts (trapper_hosts; see
	// TrapHosts), "allowed_hosts" in Zabbix's exports.
	TrapperHosts string `yaml:"allowed_hosts"`
	// AllowTraps is an HTTP agent item's allow_traps: YES or NO (or 1,
	// 0), "" for NO.
	AllowTraps string `yaml:"allow_traps"`
	// TimestampPrecision is "ns", "us", "ms", "s" or "" (default: the
	// server's history.timestamp_precision).
	TimestampPrecision string `yaml:"timestamp_precision"`
	// Description is the item's description (up to 65,535 characters).
	Description string `yaml:"description"`
	// Preprocessing is the item's steps in order, in the form of
	// Zabbix's template YAML (see PreprocSpec); none by default. Apply
	// makes the item's steps equal to this list.
	Preprocessing []PreprocSpec `yaml:"preprocessing"`
	// MasterItem names a dependent item's master by key, on the same
	// host (in this document or already in the catalog); required for
	// type dependent, refused for other types.
	MasterItem *MasterItemSpec `yaml:"master_item"`
	// Params is a calculated item's formula, a script item's script or
	// an odbc item's SQL query; required for the first two, refused for
	// types that have none.
	Params string `yaml:"params"`
	// HTTPSpec holds the HTTP agent fields (url, request_method, ...),
	// used by http_agent items only; its authtype, username and password
	// are also the login of ssh and telnet items (Zabbix's shared item
	// fields), with publickey and privatekey below, and its username and
	// password that of odbc items.
	HTTPSpec `yaml:",inline"`
	// PublicKey and PrivateKey are an ssh item's key file names in
	// poll.ssh_key_location, for authtype PUBLIC_KEY (1).
	PublicKey  string `yaml:"publickey"`
	PrivateKey string `yaml:"privatekey"`
	// JMXEndpoint is a JMX agent item's jmx_endpoint (default Zabbix's,
	// DefaultJMXEndpoint); its username and password are HTTPSpec's.
	// Ignored for other types.
	JMXEndpoint string `yaml:"jmx_endpoint"`
	// Parameters are a script item's parameters, name/value pairs in
	// order (names unique and not empty); refused for other types.
	// Apply makes the item's list equal to this one.
	Parameters []ItemParam `yaml:"parameters"`
	// ValueMap names one of the host's value maps (HostSpec.ValueMaps,
	// or one already in the catalog) that the item's values are shown
	// through. Absent, the item keeps the map it has.
	ValueMap *ValueMapRefSpec `yaml:"valuemap"`
	// Tags are the item's tags in the form of Zabbix's export
	// (tag/value pairs); Apply makes the item's tags equal to this list,
	// in its order. None by default.
	Tags []TagSpec `yaml:"tags"`
	// InventoryLink is the host inventory field the item fills, by
	// Zabbix's name (NAME, OS, ...) or number; none by default. Stored
	// and shown only: it does not fill the host's inventory yet.
	InventoryLink string `yaml:"inventory_link"`
}

// Defaults applied to empty fields.
const (
	DefaultItemType        = "trapper"
	DefaultValueType       = "float"
	DefaultTrapperDelay    = "0"
	DefaultPolledDelay     = "1m"
	DefaultHistory         = "90d"
	DefaultTrends          = "365d"
	DefaultNonNumericTrend = "0"
)

// Length limits, in characters, from the Zabbix database schema.
const (
	maxHostNameLen  = 128
	maxHostDescLen  = 65535 // Zabbix's text fields
	maxItemDescLen  = 65535
	maxGroupNameLen = 255
	maxItemNameLen  = 255
	maxUnitsLen     = 255
	maxKeyLen       = 2048
	maxDelayLen     = 1024
	// An item's check timeout: Zabbix 7's per-item range (1..600 s).
	minTimeoutSeconds = 1
	maxTimeoutSeconds = 600
	maxTagLen         = 255 // tag names and values
)

// maxReportedErrors bounds how many field errors Validate reports; a
// generated spec with one systematic mistake would otherwise produce a
// million lines.
const maxReportedErrors = 10

// FieldError is a validation error for one field of a Spec. Field is the
// field's path in the YAML document, for example "hosts[3].items[12].key".
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }

func (e *FieldError) Unwrap() error { return e.Err }

// LoadSpecFile reads, decodes and validates an import document. Unknown
// fields are errors that name the field and its line, so a misspelt
// setting is not silently ignored.
func LoadSpecFile(path string) (Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, fmt.Errorf("cannot read import file: %w", err)
	}
	s, err := ParseSpec(b)
	if err != nil {
		return Spec{}, fmt.Errorf("import file %s: %w", path, err)
	}
	return s, nil
}

// ParseSpec decodes and validates an import document held in memory. An
// empty document is an empty, valid Spec.
func ParseSpec(b []byte) (Spec, error) {
	var s Spec
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil && !errors.Is(err, io.EOF) {
		return Spec{}, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return Spec{}, err
		}
		return Spec{}, fmt.Errorf("line %d: a second YAML document is not supported; put everything in one document", extra.Line)
	}
	if s.IsZabbixExport() {
		// A Zabbix export alone is read as configuration.import reads
		// it (6.0's YAML reader drops a trailing newline of each string).
		return ParseExport(FormatYAML, b)
	}
	if err := s.Validate(); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// Validate checks the Spec after defaults are applied and reports the
// first few offending fields by path, for example
// `hosts[3].items[12].key: invalid item key "a[": ...`. Groups referenced by
// hosts need not be declared in Groups; Apply creates them.
//
// Preprocessing steps and formulas are checked for what the catalog
// itself knows (names, counts, which item types have them); what the
// steps mean is checked by Apply through Options.CheckPreprocessing and
// Options.CheckFormula.
func (s Spec) Validate() error {
	if _, err := s.normalize(false, nil); err != nil {
		return err
	}
	if _, err := s.triggerSpecs(); err != nil {
		return err
	}
	_, err := s.macroSpecs()
	return err
}

// normSpec is a validated Spec with defaults applied, the form Apply works
// from.
type normSpec struct {
	groups []string // every group named anywhere, declared ones first, no duplicates
	hosts  []normHost
	items  int // total number of items
}

type normHost struct {
	host    string
	name    string
	enabled bool
	groups  []string
	items   []Item // ID, HostID and Host unset
	// ifacesSet is set if the spec lists interfaces (ifaces, IDs unset);
	// otherwise the host keeps those it has.
	ifacesSet bool
	ifaces    []Interface
	// itemIface[i] is the interface address items[i] names, "" for the
	// default.
	itemIface []string
	// itemMaster[i] is the key of items[i]'s master item, "" for none;
	// hasMasters is set if any is not "".
	itemMaster []string
	hasMasters bool
	// tlsSet is set if the spec gives encryption settings (tls).
	tlsSet bool
	tls    HostTLS
}

// errList collects field errors up to maxReportedErrors.
type errList struct {
	errs    []error
	dropped int
}

func (l *errList) add(field string, err error) {
	if len(l.errs) == maxReportedErrors {
		l.dropped++
		return
	}
	l.errs = append(l.errs, &FieldError{Field: field, Err: err})
}

func (l *errList) addf(field, format string, args ...any) {
	l.add(field, fmt.Errorf(format, args...))
}

func (l *errList) err() error {
	if len(l.errs) == 0 {
		return nil
	}
	if l.dropped > 0 {
		l.errs = append(l.errs, fmt.Errorf("... and %d more errors", l.dropped))
	}
	if len(l.errs) == 1 {
		return l.errs[0]
	}
	return errors.Join(l.errs...)
}

// normalize validates s and, if keep is set, returns it with defaults
// applied. Strings kept are cloned, so the result does not pin the memory
// of whatever buffer s was decoded from.
func (s Spec) normalize(keep bool, ck *checks) (normSpec, error) {
	var (
		el      errList
		ns      normSpec
		intern  = map[string]string{}
		groups  = map[string]bool{}
		stepsIn stepsInterner
	)
	str := func(v string) string {
		if !keep {
			return v
		}
		if w, ok := intern[v]; ok {
			return w
		}
		w := strings.Clone(v)
		intern[w] = w
		return w
	}
	for i, g := range s.Groups {
		field := "groups[" + strconv.Itoa(i) + "].name"
		if err := checkGroupName(g.Name); err != nil {
			el.add(field, err)
			continue
		}
		if groups[g.Name] {
			el.addf(field, "duplicate group %q", g.Name)
			continue
		}
		groups[g.Name] = true
		if keep {
			ns.groups = append(ns.groups, str(g.Name))
		}
	}
	hostAt := make(map[string]int, len(s.Hosts))
	if keep {
		ns.hosts = make([]normHost, 0, len(s.Hosts))
	}
	for hi := range s.Hosts {
		hs := &s.Hosts[hi]
		hp := "hosts[" + strconv.Itoa(hi) + "]"
		nh := normHost{host: hs.Host, name: hs.Name, enabled: true}
		if err := checkHostName(hs.Host); err != nil {
			el.add(hp+".host", err)
		} else if first, dup := hostAt[hs.Host]; dup {
			el.addf(hp+".host", "duplicate host %q (first at hosts[%d])", hs.Host, first)
		} else {
			hostAt[hs.Host] = hi
		}
		if nh.name == "" {
			nh.name = hs.Host
		} else if err := checkText(hs.Name, maxHostNameLen); err != nil {
			el.add(hp+".name", err)
		}
		var err error
		if nh.enabled, err = parseStatus(hs.Status); err != nil {
			el.add(hp+".status", err)
		}
		hostGroups := make(map[string]bool, len(hs.Groups))
		for gi, g := range hs.Groups {
			field := hp + ".groups[" + strconv.Itoa(gi) + "]"
			if err := checkGroupName(g); err != nil {
				el.add(field, err)
				continue
			}
			if hostGroups[g] {
				el.addf(field, "group %q is listed twice", g)
				continue
			}
			hostGroups[g] = true
			if keep {
				nh.groups = append(nh.groups, str(g))
				if !groups[g] {
					groups[g] = true
					ns.groups = append(ns.groups, str(g))
				}
			}
		}
		if hs.TLS != nil {
			nh.tlsSet = true
			nh.tls = HostTLS{Connect: 1, Accept: 1, Issuer: str(hs.TLS.Issuer), Subject: str(hs.TLS.Subject),
				PSKIdentity: str(hs.TLS.PSKIdentity), PSK: zbxpsk.Secret(str(hs.TLS.PSK))}
			if hs.TLS.Connect != 0 {
				nh.tls.Connect = uint8(min(max(hs.TLS.Connect, 0), 255))
			}
			if hs.TLS.Accept != 0 {
				nh.tls.Accept = uint8(min(max(hs.TLS.Accept, 0), 255))
			}
			if err := nh.tls.CheckSupported(); err != nil {
				el.add(hp+".tls", err)
			}
		}
		if hs.Interfaces != nil {
			nh.ifacesSet = true
			nh.ifaces = normIfaceSpecs(hs.Host, hs.Interfaces, hp+".interfaces", &el)
		}
		keyAt := make(map[string]int, len(hs.Items))
		if keep {
			nh.items = make([]Item, 0, len(hs.Items))
			nh.itemIface = make([]string, 0, len(hs.Items))
			nh.itemMaster = make([]string, 0, len(hs.Items))
		}
		for ii := range hs.Items {
			is := &hs.Items[ii]
			ip := hp + ".items[" + strconv.Itoa(ii) + "]"
			hasMaster := is.MasterItem != nil
			if hasMaster && is.MasterItem.Key == "" {
				el.addf(ip+".master_item.key", "the master item's key is required")
				continue
			}
			it, ok := normItem(is, ip, &el, ck, hasMaster)
			if !ok {
				continue
			}
			if hasMaster && is.MasterItem.Key == is.Key {
				el.addf(ip+".master_item", "an item cannot be its own master")
				continue
			}
			if _, uses, _ := ItemInterfaceType(it.Type); !uses && is.Interface != "" {
				el.addf(ip+".interface", "item type %s uses no interface", it.Type)
				continue
			}
			if first, dup := keyAt[is.Key]; dup {
				el.addf(ip+".key", "duplicate key %q (first at %s.items[%d])", is.Key, hp, first)
				continue
			}
			keyAt[is.Key] = ii
			if keep {
				// Keys and names repeat on every host of the document
				// (as on every host a template made them on): held once,
				// as Open's interner holds them.
				it.Key = str(it.Key)
				if it.Name == is.Key {
					it.Name = it.Key
				} else {
					it.Name = str(it.Name)
				}
				it.Units, it.Delay, it.History, it.Trends = str(it.Units), str(it.Delay), str(it.History), str(it.Trends)
				if it.Extra != nil {
					x := it.MutExt()
					x.Timeout, x.SNMPOID, x.Params = str(x.Timeout), strings.Clone(x.SNMPOID), strings.Clone(x.Params)
				}
				it.Preprocessing = stepsIn.get(it.Preprocessing)
				nh.items = append(nh.items, it)
				nh.itemIface = append(nh.itemIface, strings.Clone(is.Interface))
				mk := ""
				if hasMaster {
					mk, nh.hasMasters = strings.Clone(is.MasterItem.Key), true
				}
				nh.itemMaster = append(nh.itemMaster, mk)
			}
		}
		if keep {
			nh.host, nh.name = str(nh.host), strings.Clone(nh.name)
			ns.items += len(nh.items)
			ns.hosts = append(ns.hosts, nh)
		}
	}
	if err := el.err(); err != nil {
		return normSpec{}, err
	}
	return ns, nil
}

// normIfaceSpecs validates a host's interface list and returns it with
// defaults applied: type agent, useip if an IP is given, the type's port,
// and the first interface of a type main if none of that type is marked.
func normIfaceSpecs(host string, specs []InterfaceSpec, p string, el *errList) []Interface {
	out := make([]Interface, len(specs))
	var marked [InterfaceJMX + 1]bool
	for j := range specs {
		fs := &specs[j]
		fp := p + "[" + strconv.Itoa(j) + "]"
		f := Interface{Type: InterfaceAgent, Main: fs.Main, IP: strings.Clone(fs.IP), DNS: strings.Clone(fs.DNS), Port: strings.Clone(fs.Port)}
		if fs.Type != "" {
			t, err := ParseInterfaceType(fs.Type)
			if err != nil {
				el.add(fp+".type", err)
				continue
			}
			f.Type = t
		}
		f.UseIP = fs.IP != ""
		if fs.UseIP != nil {
			f.UseIP = *fs.UseIP
		}
		if len(fs.Details) > 0 {
			f.Details = make(map[string]string, len(fs.Details))
			for k, v := range fs.Details {
				f.Details[strings.Clone(k)] = strings.Clone(v)
			}
		}
		normIface(&f, host, fp, el)
		if f.Main {
			marked[f.Type] = true
		}
		out[j] = f
	}
	for j := range out {
		if t := out[j].Type; t.Valid() && !marked[t] {
			out[j].Main, marked[t] = true, true
		}
	}
	checkMains(host, out, p, el)
	for j := range out {
		for k := range j {
			if out[k].Type == out[j].Type && out[k].Addr() == out[j].Addr() {
				el.addf(p+"["+strconv.Itoa(j)+"]", "the same %s interface as %s[%d]: items name interfaces by address, so each must be unique", out[j].Type, p, k)
				break
			}
		}
	}
	return out
}

// normItem validates one item and returns it with defaults applied. It
// reports errors to el under the path prefix ip and returns ok=false if
// there were any. hasMaster says whether the item names a master item
// (which the caller resolves); ck may be nil.
func normItem(is *ItemSpec, ip string, el *errList, ck *checks, hasMaster bool) (it Item, ok bool) {
	before := len(el.errs) + el.dropped
	it = Item{
		Key:           is.Key,
		Name:          is.Name,
		Units:         is.Units,
		Delay:         is.Delay,
		History:       is.History,
		Trends:        is.Trends,
		Type:          Trapper,
		ValueType:     history.Float,
		Preprocessing: normSteps(is.Preprocessing, ip+".preprocessing", el),
		Extra:         &ItemExtra{Description: is.Description, TimestampPrecision: is.TimestampPrecision, Params: is.Params},
	}
	if err := checkText(is.Description, maxItemDescLen); err != nil {
		el.add(ip+".description", err)
	}
	if l, err := parseInventoryLink(is.InventoryLink); err != nil {
		el.add(ip+".inventory_link", err)
	} else {
		it.InventoryLink = l
	}
	if len(is.Tags) > 0 {
		it.Tags = make([]Tag, len(is.Tags))
		for i, t := range is.Tags {
			it.Tags[i] = Tag(t)
		}
		checkTags(ip+".tags", it.Tags, el)
	}
	if it.Ext().TimestampPrecision != "" {
		if _, err := history.ParsePrecision(it.Ext().TimestampPrecision); err != nil {
			el.add(ip+".timestamp_precision", err)
		}
	}
	if err := checkKey(is.Key); err != nil {
		el.add(ip+".key", err)
	}
	if it.Name == "" {
		it.Name = is.Key
	} else if err := checkText(is.Name, maxItemNameLen); err != nil {
		el.add(ip+".name", err)
	}
	var err error
	if is.Type != "" {
		if it.Type, err = ParseItemType(is.Type); err != nil {
			el.add(ip+".type", err)
		}
	}
	if is.ValueType != "" {
		if it.ValueType, err = ParseValueType(is.ValueType); err != nil {
			el.add(ip+".value_type", err)
		}
	}
	if err := checkText(is.Units, maxUnitsLen); err != nil {
		el.add(ip+".units", err)
	}
	if it.Delay == "" {
		it.Delay = DefaultPolledDelay
		if it.Type.unscheduled() {
			it.Delay = DefaultTrapperDelay
		}
	}
	if len(it.Delay) > maxDelayLen {
		el.addf(ip+".delay", "longer than %d characters", maxDelayLen)
	} else if err := checkDelay(it.Delay, it.Type); err != nil {
		el.add(ip+".delay", err)
	}
	if it.History == "" {
		it.History = DefaultHistory
	}
	if it.HistorySeconds, err = retention32(it.History, minHistorySeconds); err != nil {
		el.add(ip+".history", err)
	}
	if it.Trends == "" {
		it.Trends = DefaultTrends
		if !it.ValueType.Numeric() {
			it.Trends = DefaultNonNumericTrend
		}
	}
	if it.TrendsSeconds, err = retention32(it.Trends, minTrendsSeconds); err != nil {
		el.add(ip+".trends", err)
	} else if it.TrendsSeconds != 0 && !it.ValueType.Numeric() {
		el.addf(ip+".trends", "must be \"0\" for value type %s: only numeric items have trends", ValueTypeName(it.ValueType))
	}
	if it.Enabled, err = parseStatus(is.Status); err != nil {
		el.add(ip+".status", err)
	}
	if is.Timeout != "" {
		if strings.Contains(is.Timeout, "{$") {
			// Resolved and range-checked when scheduled (package poll).
			if err := checkMacroRefs(is.Timeout); err != nil {
				el.add(ip+".timeout", err)
			}
		} else if secs, err := delay.ParseSeconds(is.Timeout); err != nil {
			el.add(ip+".timeout", err)
		} else if secs < minTimeoutSeconds || secs > maxTimeoutSeconds {
			el.addf(ip+".timeout", "timeout %q is out of range: use 1s..600s, or nothing for the server's default", is.Timeout)
		}
		it.Extra.Timeout = is.Timeout
	}
	if is.RetryDelay != "" {
		if strings.Contains(is.RetryDelay, "{$") {
			if err := checkMacroRefs(is.RetryDelay); err != nil {
				el.add(ip+".retry_delay", err)
			}
		} else if secs, err := delay.ParseSeconds(is.RetryDelay); err != nil {
			el.add(ip+".retry_delay", err)
		} else if secs < 1 || secs > maxDelaySeconds {
			el.addf(ip+".retry_delay", "retry interval %q is out of range: use 1s..1d, or nothing for none", is.RetryDelay)
		}
		it.Extra.RetryDelay = strings.Clone(is.RetryDelay) // not interned: rare
	}
	if it.Type == SNMPAgent {
		if _, err := snmpoid.Parse(is.SNMPOID); err != nil {
			el.addf(ip+".snmp_oid", "%v", err)
		}
		it.Extra.SNMPOID = is.SNMPOID
	}
	it.Extra.IPMISensor = is.IPMISensor
	if err := checkIPMISensor(&it); err != nil {
		el.add(ip+".ipmi_sensor", err)
	}
	it.Extra.LogTimeFmt = is.LogTimeFmt
	if err := checkLogTimeFmt(is.LogTimeFmt); err != nil {
		el.add(ip+".logtimefmt", err)
	}
	if allow, ok := parseYesNo(is.AllowTraps); !ok {
		el.addf(ip+".allow_traps", "%q is not one of YES, NO, 1, 0", is.AllowTraps)
	} else if err := checkTrapHosts(it.Type, is.TrapperHosts, allow); err != nil {
		el.add(ip+".allowed_hosts", err)
	} else {
		it.Extra.Traps = newTrapHosts(is.TrapperHosts, allow)
	}
	it.Extra.HTTP = normHTTP(&is.HTTPSpec, it.Type, ip, el)
	it.Extra.Login = normLogin(is, it.Type, ip, el)
	it.Extra.JMX = normJMX(is.JMXEndpoint, &is.HTTPSpec, it.Type, ip, el)
	it.Extra.ODBC = normODBC(&is.HTTPSpec, it.Type, ip, el)
	if len(is.Parameters) > 0 {
		if it.Type != Script {
			el.addf(ip+".parameters", "only script items have parameters, not %s items", it.Type)
		} else {
			checkItemParams(is.Parameters, ip+".parameters", el)
			it.Extra.Parameters = cloneItemParams(is.Parameters)
		}
	}
	if len(el.errs)+el.dropped == before {
		ck.checkItemExtras(&it, hasMaster, ip, el)
	}
	it.trimExtra()
	return it, len(el.errs)+el.dropped == before
}

func parseStatus(s string) (enabled bool, err error) {
	switch s {
	case "", "enabled":
		return true, nil
	case "disabled":
		return false, nil
	}
	return false, fmt.Errorf("unknown status %q: use enabled or disabled", s)
}

// checkHostName applies the Zabbix rule for technical host names: 1..128
// characters from 0-9 a-z A-Z . _ - and space.
func checkHostName(s string) error {
	if s == "" {
		return errors.New("host name is required")
	}
	if len(s) > maxHostNameLen {
		return fmt.Errorf("host name %q is longer than %d characters", s, maxHostNameLen)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '.' || c == '_' || c == '-' || c == ' ') {
			return fmt.Errorf("host name %q contains %q: only 0-9 a-z A-Z . _ - and space are allowed", s, rune(s[i]))
		}
	}
	return nil
}

func checkGroupName(s string) error {
	if s == "" {
		return errors.New("group name is required")
	}
	if strings.TrimSpace(s) != s {
		return fmt.Errorf("group name %q has leading or trailing spaces", s)
	}
	if strings.HasPrefix(s, "/") || strings.HasSuffix(s, "/") || strings.Contains(s, "//") {
		// Zabbix's nested group names: "/" separates non-empty parts
		// (its words, recorded from 6.0.14).
		return errors.New("invalid host group name")
	}
	return checkText(s, maxGroupNameLen)
}

// checkText checks that s is valid UTF-8 of at most max characters.
func checkText(s string, max int) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%q is not valid UTF-8", s)
	}
	if n := utf8.RuneCountInString(s); n > max {
		// 6.0.14 says "value is too long"; the numbers are ours.
		return fmt.Errorf("value is too long (%d characters, the limit is %d)", n, max)
	}
	return nil
}

func checkKey(key string) error {
	if key == "" {
		return errors.New("item key is required")
	}
	if !utf8.ValidString(key) {
		return fmt.Errorf("item key %q is not valid UTF-8", key)
	}
	if n := utf8.RuneCountInString(key); n > maxKeyLen {
		return fmt.Errorf("item key of %d characters is longer than the limit of %d", n, maxKeyLen)
	}
	if _, err := itemkey.Parse(key); err != nil {
		// The parser's message already reads `invalid item key "a[": ...`.
		if errors.Is(err, itemkey.ErrInvalidKey) {
			return err
		}
		return fmt.Errorf("invalid item key %q: %w", key, err)
	}
	return nil
}
