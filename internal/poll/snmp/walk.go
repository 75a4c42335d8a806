package snmp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/zbx/snmpoid"
)

// walk returns the variables under root, in order, with GetBulk
// (SNMPv2c/v3 with bulk) or GetNext. It stops at the end of the subtree
// or of the MIB view; a device that does not advance, or a subtree
// larger than MaxWalkValues, fails it.
func (d *device) walk(ctx context.Context, ch *poll.Check, root string, timeout time.Duration) ([]gosnmp.SnmpPDU, *poll.Result) {
	c := d.c
	var out []gosnmp.SnmpPDU
	cursor := root
	prefix := root + "."
	for {
		var pkt *gosnmp.SnmpPacket
		var err error
		if d.bulk && d.g.Version != gosnmp.Version1 {
			c.requests[pduGetBulk].Inc()
			pkt, err = d.g.GetBulk([]string{cursor}, 0, uint32(c.opts.MaxRepetitions))
		} else {
			c.requests[pduGetNext].Inc()
			pkt, err = d.g.GetNext([]string{cursor})
		}
		if err != nil {
			st, r, msg := d.failure(ctx, err, timeout)
			return nil, d.fail(ch, st, r, msg)
		}
		c.values.Add(uint64(len(pkt.Variables)))
		if pkt.Error == gosnmp.NoSuchName && d.g.Version == gosnmp.Version1 {
			return out, nil // SNMPv1's end of the MIB
		}
		if pkt.Error != gosnmp.NoError {
			return nil, d.fail(ch, poll.NotSupported, reasonSNMPError, "SNMP error: "+errorStatus(pkt.Error))
		}
		if len(pkt.Variables) == 0 {
			return nil, d.fail(ch, poll.NotSupported, reasonMalformed, "invalid SNMP response: no values in a walk of "+root)
		}
		for i := range pkt.Variables {
			v := &pkt.Variables[i]
			switch v.Type {
			case gosnmp.EndOfMibView, gosnmp.NoSuchObject, gosnmp.NoSuchInstance:
				return out, nil
			}
			if !strings.HasPrefix(v.Name, prefix) {
				return out, nil
			}
			if compareOIDs(v.Name, cursor) <= 0 {
				return nil, d.fail(ch, poll.NotSupported, reasonMalformed, fmt.Sprintf("invalid SNMP response: OID not increasing: %.128s after %.128s", v.Name, cursor))
			}
			if len(out) >= c.opts.MaxWalkValues {
				return nil, d.fail(ch, poll.NotSupported, reasonTooLarge, fmt.Sprintf("the walk of %s has more than %d values (raise snmp.max_walk_values)", root, c.opts.MaxWalkValues))
			}
			out = append(out, *v)
			cursor = v.Name
		}
	}
}

// compareOIDs orders numeric OIDs (".1.3.6...") by sub-identifier; an
// unparsable one sorts first, which stops a walk.
func compareOIDs(a, b string) int {
	a, b = strings.TrimPrefix(a, "."), strings.TrimPrefix(b, ".")
	for a != "" && b != "" {
		var x, y string
		x, a, _ = strings.Cut(a, ".")
		y, b, _ = strings.Cut(b, ".")
		nx, ex := strconv.ParseUint(x, 10, 32)
		ny, ey := strconv.ParseUint(y, 10, 32)
		if ex != nil || ey != nil {
			return -1
		}
		if nx != ny {
			if nx < ny {
				return -1
			}
			return 1
		}
	}
	switch {
	case a == "" && b == "":
		return 0
	case a == "":
		return -1
	}
	return 1
}

// discovery answers discovery[{#MACRO},OID,...]: a JSON array of LLD
// rows, one per index of the first OID's walk, with {#SNMPINDEX} and
// each macro's value at that index (indexes the first walk lacks are
// left out, as Zabbix does).
func (d *device) discovery(ctx context.Context, ch *poll.Check, req snmpoid.Request, timeout time.Duration) *poll.Result {
	var rows []map[string]string
	at := map[string]int{}
	for i, oid := range req.OIDs {
		vars, fail := d.walk(ctx, ch, oid, timeout)
		if fail != nil {
			return fail
		}
		for j := range vars {
			idx := vars[j].Name[len(oid)+1:]
			val, _, ok := render(nil, &vars[j])
			if !ok {
				continue
			}
			if i == 0 {
				at[idx] = len(rows)
				rows = append(rows, map[string]string{"{#SNMPINDEX}": idx, req.Macros[0]: string(val)})
			} else if r, ok := at[idx]; ok {
				rows[r][req.Macros[i]] = string(val)
			}
		}
	}
	if rows == nil {
		rows = []map[string]string{}
	}
	b, err := json.Marshal(rows)
	if err != nil {
		return d.fail(ch, poll.NotSupported, reasonMalformed, "cannot encode the discovery: "+err.Error())
	}
	if len(b) > d.c.opts.MaxValueSize {
		return d.fail(ch, poll.NotSupported, reasonTooLarge, fmt.Sprintf("the discovery's JSON is %d bytes, more than %d", len(b), d.c.opts.MaxValueSize))
	}
	return &poll.Result{Check: *ch, Status: poll.OK, Value: b, Clock: time.Now()}
}

// dynamicIndex answers OID["index",<index OID>,<value>]: the index
// whose value in the index column equals <value> (found by a walk, kept
// while the session lasts and found again when it stops answering), then
// a GET of OID.<index>.
func (d *device) dynamicIndex(ctx context.Context, ch *poll.Check, req snmpoid.Request, timeout time.Duration) *poll.Result {
	key := req.OID + "\x00" + req.IndexOID + "\x00" + req.IndexValue
	for attempt := 0; attempt < 2; attempt++ {
		idx, cached := d.indexes[key]
		if !cached {
			vars, fail := d.walk(ctx, ch, req.IndexOID, timeout)
			if fail != nil {
				return fail
			}
			for j := range vars {
				if val, _, ok := render(nil, &vars[j]); ok && string(val) == req.IndexValue {
					idx = vars[j].Name[len(req.IndexOID)+1:]
					break
				}
			}
			if idx == "" {
				return d.fail(ch, poll.NotSupported, reasonConfig, fmt.Sprintf("Cannot find index of \"%s\" in \"%s\".", req.IndexValue, req.IndexOID))
			}
			if d.indexes == nil {
				d.indexes = map[string]string{}
			}
			d.indexes[key] = idx
		}
		var res *poll.Result
		oid := req.OID + "." + idx
		d.get(ctx, []getItem{{pending{ch, func(r *poll.Result) { res = r }, true}, oid}}, timeout)
		if cached && res.Status == poll.NotSupported && (res.Error == msgNoSuchInstance || res.Error == msgNoSuchObject) {
			delete(d.indexes, key) // the index moved: find it again
			continue
		}
		return res
	}
	return d.fail(ch, poll.NotSupported, reasonConfig, fmt.Sprintf("Cannot find index of \"%s\" in \"%s\".", req.IndexValue, req.IndexOID))
}
