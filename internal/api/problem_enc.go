package api

import (
	"slices"
	"sort"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/api/zjson"
	"github.com/peregrine-mon/peregrine/internal/event"
)

// Fast encoding of problem.get's common case: all fields (output
// "extend" or none), no filter, search or preservekeys. Each problem is
// written straight into one buffer in the generic encoder's order (keys
// sorted), without building an object map per problem: with 100,000
// open problems the maps, key sorts and per-field strings were most of
// the time. TestProblemEncodingMatches checks it against the generic
// path byte for byte.

// problemSelects says which selectX members problem.get adds.
type problemSelects struct {
	acks, tags, suppression bool
	users                   *ackUsers // the acknowledgements' users
}

// fastProblems reports whether the request can take the fast path.
func fastProblems(p *getParams) bool {
	if p.Filter.Given() || p.Search.Given() || p.PreserveKeys.Value || p.CountOutput.Value {
		return false
	}
	return p.outputFields().all
}

// appendProblems encodes evs as problem.get's result array.
func (s *Server) appendProblems(dst []byte, evs []event.Event, sel problemSelects) []byte {
	// About 360 bytes a problem with tags: sized once rather than
	// doubled (and copied) some twenty times for 100,000 problems.
	dst = slices.Grow(dst, 2+len(evs)*400)
	dst = append(dst, '[')
	for i := range evs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = s.appendProblem(dst, &evs[i], sel)
	}
	return append(dst, ']')
}

func appendQuotedInt(dst []byte, name string, v int64) []byte {
	dst = append(dst, `,"`...)
	dst = append(dst, name...)
	dst = append(dst, `":"`...)
	dst = strconv.AppendInt(dst, v, 10)
	return append(dst, '"')
}

func appendQuotedUint(dst []byte, name string, v uint64) []byte {
	dst = append(dst, `,"`...)
	dst = append(dst, name...)
	dst = append(dst, `":"`...)
	dst = strconv.AppendUint(dst, v, 10)
	return append(dst, '"')
}

func appendField(dst []byte, name, v string) []byte {
	dst = append(dst, `,"`...)
	dst = append(dst, name...)
	dst = append(dst, `":`...)
	return zjson.AppendString(dst, v)
}

// appendProblem writes one problem object; the keys in sorted order.
func (s *Server) appendProblem(dst []byte, e *event.Event, sel problemSelects) []byte {
	dst = append(dst, `{"acknowledged":"`...)
	dst = append(dst, boolStr(e.Acknowledged)...)
	dst = append(dst, '"')
	if sel.acks {
		dst = append(dst, `,"acknowledges":`...)
		dst, _ = appendValue(dst, ackObjects(s.opts.Events.Acks(e.ID), sel.users))
	}
	dst = appendQuotedInt(dst, "clock", e.Clock)
	dst = appendQuotedUint(dst, "correlationid", e.CorrelationID)
	dst = appendQuotedUint(dst, "eventid", e.ID)
	dst = appendField(dst, "name", e.Name)
	dst = appendQuotedInt(dst, "ns", int64(e.NS))
	dst = appendQuotedInt(dst, "object", int64(e.Object))
	dst = appendQuotedUint(dst, "objectid", e.ObjectID)
	dst = appendField(dst, "opdata", e.Opdata)
	dst = appendQuotedInt(dst, "r_clock", e.RClock)
	dst = appendQuotedUint(dst, "r_eventid", e.REventID)
	dst = appendQuotedInt(dst, "r_ns", int64(e.RNS))
	dst = appendQuotedInt(dst, "severity", int64(e.Severity))
	dst = appendQuotedInt(dst, "source", int64(e.Source))
	dst = append(dst, `,"suppressed":"`...)
	dst = append(dst, boolStr(e.Suppressed)...)
	dst = append(dst, '"')
	if sel.suppression {
		dst = append(dst, `,"suppression_data":[]`...)
	}
	if sel.tags {
		dst = append(dst, `,"tags":[`...)
		for i, t := range e.Tags {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"tag":`...)
			dst = zjson.AppendString(dst, t.Tag)
			dst = append(dst, `,"value":`...)
			dst = zjson.AppendString(dst, t.Value)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"urls":[]`...)
	dst = appendQuotedUint(dst, "userid", e.UserID)
	return append(dst, '}')
}

// shortProblemFields are the fields of the short problem.get a client
// asks for to list and sort an incident storm before reading details
// (the web UI's ["eventid", "objectid", "severity", "clock"]).
var shortProblemFields = map[string]bool{"clock": true, "eventid": true, "objectid": true, "severity": true}

// shortProblems returns the requested fields with the problem's ID,
// sorted as the generic encoder writes keys, when the request is an
// output list of short fields only, without filter, search,
// preservekeys, countOutput or selects; nil otherwise. With 50,000 open
// problems this skips building 50,000 object maps to write four
// numbers each.
func shortProblems(p *getParams, selects bool) []string {
	if p.Filter.Given() || p.Search.Given() || p.PreserveKeys.Value || p.CountOutput.Value || selects {
		return nil
	}
	o := p.outputFields()
	if o.all {
		return nil
	}
	fields := []string{"eventid"}
	for f := range o.fields {
		if !shortProblemFields[f] {
			return nil
		}
		if f != "eventid" {
			fields = append(fields, f)
		}
	}
	sort.Strings(fields)
	return fields
}

// appendShortProblems encodes evs with only fields (from shortProblems).
func appendShortProblems(dst []byte, evs []event.Event, fields []string) []byte {
	dst = slices.Grow(dst, 2+len(evs)*(16+24*len(fields)))
	dst = append(dst, '[')
	for i := range evs {
		if i > 0 {
			dst = append(dst, ',')
		}
		e := &evs[i]
		for j, f := range fields {
			n := len(dst)
			switch f {
			case "clock":
				dst = appendQuotedInt(dst, f, e.Clock)
			case "eventid":
				dst = appendQuotedUint(dst, f, e.ID)
			case "objectid":
				dst = appendQuotedUint(dst, f, e.ObjectID)
			case "severity":
				dst = appendQuotedInt(dst, f, int64(e.Severity))
			}
			if j == 0 {
				dst[n] = '{' // the helpers write a leading comma
			}
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}
