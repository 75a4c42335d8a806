package api

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// Actions of auto-registration (event source 2) and internal events
// (source 3), checked as Zabbix 6.0.14 checks them (errors recorded in
// the conformance case autoreg): their condition types and operators,
// their operations (2: send message, remote command and the host
// operations 2-10, run once: no escalation steps, recovery or update
// operations; 3: send message, with recovery operations).

// Operation references of auto-registration actions.
type (
	templateRefParams struct {
		ID opt[uint64] `json:"templateid"`
	}
	opInventoryParams struct {
		InventoryMode opt[int64] `json:"inventory_mode"`
	}
)

// checkSourceRaw refuses the members 6.0 does not take for an action of
// source src, in the object as the client sent it.
func checkSourceRaw(o alertObject, src int64, i int) error {
	if !hostOpSource(int(src)) && src != catalog.SourceInternal {
		return nil
	}
	var unexpected []string
	if hostOpSource(int(src)) {
		unexpected = []string{"esc_period", "pause_suppressed", "notify_if_canceled", "recovery_operations", "update_operations"}
	} else {
		unexpected = []string{"pause_suppressed", "update_operations"}
	}
	for _, k := range unexpected {
		if o.has(k) {
			return errParams(`Invalid parameter "/%d": unexpected parameter "%s".`, i+1, k)
		}
	}
	if !hostOpSource(int(src)) {
		return nil
	}
	raw, _ := o.get("operations")
	var ops []map[string]json.RawMessage
	_ = json.Unmarshal(raw, &ops) // a wrong type is the decoder's error
	for j, op := range ops {
		for _, k := range []string{"esc_period", "esc_step_from", "esc_step_to", "evaltype", "opconditions"} {
			if _, ok := op[k]; ok {
				return errParams(`Invalid parameter "/%d/operations/%d": unexpected parameter "%s".`, i+1, j+1, k)
			}
		}
	}
	return nil
}

// hostOpSource reports whether actions of the event source have the
// host operations and run once: auto-registration and discovery.
func hostOpSource(src int) bool {
	return src == catalog.SourceAutoreg || src == catalog.SourceDiscovery
}

// sourceConditions are the condition types and their operators 6.0
// takes per event source (recorded).
var sourceConditions = map[int]map[int][]int{
	catalog.SourceAutoreg: {catalog.CondProxy: {0, 1}, catalog.CondHostName: {2, 3, 8, 9}, catalog.CondHostMetadata: {2, 3, 8, 9}},
	catalog.SourceDiscovery: {catalog.CondDHostIP: {0, 1}, catalog.CondDServiceType: {0, 1}, catalog.CondDServicePort: {0, 1},
		catalog.CondDStatus: {0}, catalog.CondDUptime: {5, 6}, catalog.CondDValue: {0, 1, 5, 6, 2, 3}, catalog.CondDRule: {0, 1},
		catalog.CondDCheck: {0, 1}, catalog.CondProxy: {0, 1}, catalog.CondDObject: {0}},
	catalog.SourceInternal: {catalog.CondHostGroup: {0, 1}, catalog.CondHost: {0, 1}, catalog.CondTemplate: {0, 1},
		catalog.CondEventType: {0}, catalog.CondTag: {0, 1, 2, 3}, catalog.CondTagValue: {0, 1, 2, 3}},
}

func joinInts(xs []int) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ", "
		}
		s += strconv.Itoa(x)
	}
	return s
}

// oneOfInts is 6.0's "value must be ..." for a list of integers.
func oneOfInts(xs []int) string {
	if len(xs) == 1 {
		return strconv.Itoa(xs[0])
	}
	return "one of " + joinInts(xs)
}

// sourceCondition checks one condition of an action of source 2 or 3.
func (s *Server) sourceCondition(src int, c *catalog.Condition, p string, j int) error {
	ops := sourceConditions[src]
	if src == catalog.SourceDiscovery {
		// 6.0 lists its operators in this order (recorded).
		if c.ConditionType == catalog.CondDValue && !slices.Contains(ops[c.ConditionType], c.Operator) {
			return errParams(`Invalid parameter "%s/filter/conditions/%d/operator": value must be one of 0, 1, 5, 6, 2, 3.`, p, j+1)
		}
	}
	types := slices.Sorted(func(yield func(int) bool) {
		for t := range ops {
			if !yield(t) {
				return
			}
		}
	})
	allowed, ok := ops[c.ConditionType]
	path := fmt.Sprintf("%s/filter/conditions/%d", p, j+1)
	switch {
	case !ok:
		return errParams(`Invalid parameter "%s/conditiontype": value must be %s.`, path, oneOfInts(types))
	case !slices.Contains(allowed, c.Operator):
		return errParams(`Invalid parameter "%s/operator": value must be %s.`, path, oneOfInts(allowed))
	}
	snap := s.opts.Catalog.Snapshot()
	if src == catalog.SourceDiscovery {
		return s.discoveryCondition(c, path)
	}
	switch c.ConditionType {
	case catalog.CondEventType:
		if !slices.Contains([]string{"0", "2", "4"}, c.Value) {
			return errParams(`Invalid parameter "%s/value": value must be one of 0, 2, 4.`, path)
		}
	case catalog.CondHostGroup, catalog.CondHost, catalog.CondTemplate:
		id, _ := strconv.ParseUint(c.Value, 10, 64)
		if c.ConditionType == catalog.CondHostGroup && snap.GroupByID(id) == nil {
			return errApp("Incorrect action condition or operation host group. Host group does not exist or you have no access to it.")
		}
		if c.ConditionType == catalog.CondHost && snap.HostByID(id) == nil {
			return errApp("Incorrect action condition host. Host does not exist or you have no access to it.")
		}
		if c.ConditionType == catalog.CondTemplate && snap.Template(id) == nil {
			return errApp("Incorrect action condition or operation template. Template does not exist or you have no access to it.")
		}
	case catalog.CondTagValue:
		if c.Value2 == "" {
			return errParams(`Invalid parameter "%s/value2": cannot be empty.`, path)
		}
	default:
		if c.Value == "" {
			return errParams(`Invalid parameter "%s/value": cannot be empty.`, path)
		}
	}
	return nil
}

// sourceOperation checks the host operation fields of an operation of
// an auto-registration action and stores them in op.
func (s *Server) sourceOperation(o *operationParams, op *catalog.Operation, path string) error {
	snap := s.opts.Catalog.Snapshot()
	switch op.OperationType {
	case catalog.OpAddToGroup, catalog.OpRemoveFromGroup:
		if !o.OpGroup.Given() {
			return errParams(`Invalid parameter "%s": the parameter "opgroup" is missing.`, path)
		}
		if len(o.OpGroup.Value) == 0 {
			return errParams(`Invalid parameter "%s/opgroup": cannot be empty.`, path)
		}
		for _, g := range o.OpGroup.Value {
			if snap.GroupByID(g.ID.Value) == nil {
				return errApp("Incorrect action condition or operation host group. Host group does not exist or you have no access to it.")
			}
			op.OpGroups = append(op.OpGroups, g.ID.Value)
		}
	case catalog.OpLinkTemplate, catalog.OpUnlinkTemplate:
		if !o.OpTemplate.Given() {
			return errParams(`Invalid parameter "%s": the parameter "optemplate" is missing.`, path)
		}
		if len(o.OpTemplate.Value) == 0 {
			return errParams(`Invalid parameter "%s/optemplate": cannot be empty.`, path)
		}
		for _, t := range o.OpTemplate.Value {
			if snap.Template(t.ID.Value) == nil {
				return errApp("Incorrect action condition or operation template. Template does not exist or you have no access to it.")
			}
			op.OpTemplates = append(op.OpTemplates, t.ID.Value)
		}
	case catalog.OpSetHostInventoryMod:
		if !o.OpInventory.Given() {
			return errParams(`Invalid parameter "%s": the parameter "opinventory" is missing.`, path)
		}
		m := o.OpInventory.Value.InventoryMode.Value
		if m != 0 && m != 1 {
			return errParams(`Invalid parameter "%s/opinventory/inventory_mode": value must be one of 0, 1.`, path)
		}
		op.InventoryMode = int(m)
	}
	return nil
}

// sourceOperationObject adds an auto-registration operation's own
// members to its action.get object.
func sourceOperationObject(o object, op *catalog.Operation) {
	refs := func(key string, ids []uint64) []object {
		l := []object{}
		for _, id := range ids {
			l = append(l, object{key: u64(id)})
		}
		return l
	}
	switch op.OperationType {
	case catalog.OpAddToGroup, catalog.OpRemoveFromGroup:
		o["opgroup"] = refs("groupid", op.OpGroups)
	case catalog.OpLinkTemplate, catalog.OpUnlinkTemplate:
		o["optemplate"] = refs("templateid", op.OpTemplates)
	case catalog.OpSetHostInventoryMod:
		o["opinventory"] = object{"inventory_mode": istr(op.InventoryMode)}
	}
}

// sourceFormulaIDs names the conditions of a filter evaluated and/or,
// and or or as 6.0.14 does (recorded): A, B, ... in the order of
// condition type descending, then operator descending, ties in the
// order given.
func sourceFormulaIDs(cs []catalog.Condition) {
	idx := make([]int, len(cs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if cs[a].ConditionType != cs[b].ConditionType {
			return cs[b].ConditionType - cs[a].ConditionType
		}
		return cs[b].Operator - cs[a].Operator
	})
	for n, i := range idx {
		cs[i].FormulaID = string(rune('A' + n%26))
	}
}
