package api

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/audit"
)

// AuditLog is where the API records its changes and auditlog.get reads
// them; *audit.Log implements it.
type AuditLog interface {
	// Enabled reports whether changes are recorded (Zabbix's
	// auditlog_enabled).
	Enabled() bool
	// Append writes records durably.
	Append(recs []audit.Record) error
	// Walk calls fn with the records in clock order (newest first with
	// desc) until it returns false.
	Walk(desc bool, fn func(r *audit.Record) bool)
}

// registerAudit registers auditlog.get (super admins only, as in Zabbix
// 6.0) and makes the audited methods record their changes, when
// Options.Audit is set.
func (s *Server) registerAudit() {
	if s.opts.Audit == nil {
		return
	}
	s.methods["auditlog.get"] = &method{role: RoleSuperAdmin, call: s.auditlogGet}
	s.wrapAudited()
}

// auditFields are auditlog.get's output fields, in Zabbix's order.
var auditFields = []string{"auditid", "userid", "username", "clock", "ip", "action", "resourcetype", "resourceid", "resource_cuid", "resourcename", "recordsetid", "details"}

// auditlogGetParams are auditlog.get's parameters, checked as Zabbix
// 6.0's input validator checks them.
type auditlogGetParams struct {
	AuditIDs        opt[cuids]               `json:"auditids" zbx:"null,normalize"`
	UserIDs         opt[ids]                 `json:"userids" zbx:"null,normalize"`
	Filter          opt[map[string][]string] `json:"filter" as:"filter" zbx:"null" in:"auditid,userid,clock,action,resourcetype,ip,resourceid,resourcename,username,recordsetid"`
	Search          opt[map[string][]string] `json:"search" as:"filter" zbx:"null" in:"ip,resourcename,username,details"`
	TimeFrom        opt[int64]               `json:"time_from" zbx:"null"`
	TimeTill        opt[int64]               `json:"time_till" zbx:"null"`
	SearchByAny     opt[bool]                `json:"searchByAny"`
	StartSearch     opt[bool]                `json:"startSearch" as:"flag"`
	ExcludeSearch   opt[bool]                `json:"excludeSearch" as:"flag"`
	SearchWildcards opt[bool]                `json:"searchWildcardsEnabled"`
	Output          opt[[]string]            `json:"output" as:"output" in:"auditid,userid,username,clock,ip,action,resourcetype,resourceid,resource_cuid,resourcename,recordsetid,details"`
	CountOutput     opt[bool]                `json:"countOutput" as:"flag"`
	SortField       opt[[]string]            `json:"sortfield" in:"auditid,userid,clock" zbx:"normalize,uniq"`
	SortOrder       opt[[]string]            `json:"sortorder" as:"sortorder"`
	Limit           opt[int64]               `json:"limit" in:"1:2147483647" zbx:"null"`
	PreserveKeys    opt[bool]                `json:"preservekeys"`
}

// cuids is a list of CUIDs (auditids), or one; as Zabbix 6.0 reads
// them, a single string that is no CUID is "not an array".
type cuids []string

func (l *cuids) decodeParam(b []byte, _ *fieldCtx) error {
	b = bytes.TrimSpace(b)
	switch jsonKindOf(b) {
	case 'n':
		return nil
	case 's':
		var s string
		if json.Unmarshal(b, &s) != nil || len(s) != 25 {
			return &valueError{msg: "an array is expected"}
		}
		*l = cuids{s}
		return nil
	case 'a':
	default:
		return &valueError{msg: "an array is expected"}
	}
	var elems []json.RawMessage
	if json.Unmarshal(b, &elems) != nil {
		return &valueError{msg: "an array is expected"}
	}
	out := make(cuids, 0, len(elems))
	for i, e := range elems {
		var s string
		if jsonKindOf(e) != 's' || json.Unmarshal(e, &s) != nil {
			return &valueError{sub: strconv.Itoa(i + 1), msg: "a character string is expected"}
		}
		if len(s) != 25 {
			return &valueError{sub: strconv.Itoa(i + 1), msg: "must be 25 characters long"}
		}
		out = append(out, s)
	}
	*l = out
	return nil
}

// auditField is a field of a record as auditlog.get returns it.
func auditField(r *audit.Record, f string) string {
	switch f {
	case "auditid":
		return r.ID
	case "userid":
		return id(r.UserID)
	case "username":
		return r.Username
	case "clock":
		return strconv.FormatInt(r.Clock, 10)
	case "ip":
		return r.IP
	case "action":
		return strconv.Itoa(r.Action)
	case "resourcetype":
		return strconv.Itoa(r.ResourceType)
	case "resourceid":
		return id(r.ResourceID)
	case "resource_cuid":
		if r.ResourceCUID == "" {
			return "0"
		}
		return r.ResourceCUID
	case "resourcename":
		return r.ResourceName
	case "recordsetid":
		return r.RecordSetID
	case "details":
		return r.Details
	}
	return ""
}

// auditRow is a record as auditlog.get returns it.
func auditRow(r *audit.Record) object {
	o := make(object, len(auditFields))
	for _, f := range auditFields {
		o[f] = auditField(r, f)
	}
	return o
}

func (s *Server) auditlogGet(_ context.Context, c *call) (any, error) {
	var p auditlogGetParams
	if err := decodeValidated(c.params, &p); err != nil {
		return nil, err
	}
	// The usual call, the latest changes (clock DESC and a limit),
	// walks from the newest record and stops at the limit.
	desc := len(p.SortField.Value) == 1 && p.SortField.Value[0] == "clock" && len(p.SortOrder.Value) > 0 && strings.EqualFold(p.SortOrder.Value[0], "DESC")
	early := p.Limit.Given() && !p.CountOutput.Value && (desc || len(p.SortField.Value) == 0)
	var objs []object
	n := 0
	s.opts.Audit.Walk(desc, func(r *audit.Record) bool {
		if !p.auditMatch(r) {
			return true
		}
		n++
		if !p.CountOutput.Value {
			objs = append(objs, auditRow(r))
		}
		return !early || len(objs) < int(p.Limit.Value)
	})
	if p.CountOutput.Value {
		return strconv.Itoa(n), nil
	}
	if len(p.SortField.Value) > 0 && !desc {
		so := p.SortOrder.Value
		slices.SortStableFunc(objs, func(a, b object) int {
			for i, f := range p.SortField.Value {
				x, y := a[f].(string), b[f].(string)
				c := strings.Compare(x, y)
				if f != "auditid" {
					xi, _ := strconv.ParseUint(x, 10, 64)
					yi, _ := strconv.ParseUint(y, 10, 64)
					c = cmpU64(xi, yi)
				}
				// One order applies to every field; a list, field by field.
				if len(so) == 1 && strings.EqualFold(so[0], "DESC") || len(so) > 1 && i < len(so) && strings.EqualFold(so[i], "DESC") {
					c = -c
				}
				if c != 0 {
					return c
				}
			}
			return 0
		})
	}
	if p.Limit.Given() && int(p.Limit.Value) < len(objs) {
		objs = objs[:p.Limit.Value]
	}
	keys := make([]string, len(objs))
	out := parseOutput(p.Output.Value, true)
	for i, o := range objs {
		keys[i] = o["auditid"].(string)
		if !out.all {
			shaped := object{}
			for _, f := range auditFields {
				if out.has(f) {
					shaped[f] = o[f]
				}
			}
			objs[i] = shaped
		}
	}
	if p.PreserveKeys.Value {
		m := make(map[string]object, len(objs))
		for i, o := range objs {
			m[keys[i]] = o
		}
		return m, nil
	}
	if objs == nil {
		objs = []object{}
	}
	return objs, nil
}

// auditMatch applies auditlog.get's filters to r: IDs, times, filter
// (exact values) and search (case-insensitive substrings; Zabbix 6.0
// ignores excludeSearch here, and a search for a list of values finds
// nothing).
func (p *auditlogGetParams) auditMatch(r *audit.Record) bool {
	if len(p.AuditIDs.Value) > 0 && !slices.Contains(p.AuditIDs.Value, r.ID) {
		return false
	}
	if len(p.UserIDs.Value) > 0 && !slices.Contains(p.UserIDs.Value, r.UserID) {
		return false
	}
	if p.TimeFrom.Given() && r.Clock < p.TimeFrom.Value || p.TimeTill.Given() && r.Clock > p.TimeTill.Value {
		return false
	}
	if len(p.Filter.Value) == 0 && len(p.Search.Value) == 0 {
		return true
	}
	for f, want := range p.Filter.Value {
		if len(want) > 0 && !slices.Contains(want, auditField(r, f)) {
			return false
		}
	}
	gp := getParams{StartSearch: p.StartSearch, SearchWildcards: p.SearchWildcards}
	searched, hits := 0, 0
	for f, want := range p.Search.Value {
		if len(want) == 0 || len(want) == 1 && want[0] == "" {
			continue
		}
		searched++
		if len(want) == 1 && gp.searchMatch(auditField(r, f), want[0]) {
			hits++
		}
	}
	if searched == 0 {
		return true
	}
	if p.SearchByAny.Value {
		return hits > 0
	}
	return hits == searched
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
