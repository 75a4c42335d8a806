package api

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/peregrine-mon/peregrine/internal/audit"
)

// hanode.get: Zabbix 6.0's high-availability nodes. A cluster node
// (Options.HACluster) lists the registry of internal/ha. A standalone
// server lists one node, itself, as recorded from 6.0.14 with HA
// disabled: {"ha_nodeid": <its CUID>, "name": "",
// "address": "localhost", "port": "10051", "lastaccess": <now>,
// "status": "3"} (active) — "localhost" and 10051 whatever the server's
// ListenIP and ListenPort. Peregrine's node ID is made once per
// process (6.0 keeps its node's row across restarts). Super admins
// only, as in 6.0.

// haNodeID is this process's node ID.
var haNodeID = sync.OnceValue(func() string { return audit.NewCUID(time.Now()) })

// haNodeFields are a node's fields, in 6.0's order.
const haNodeFields = "ha_nodeid,name,address,port,lastaccess,status"

// hanodeGetParams are hanode.get's parameters, checked as 6.0's
// validator checks them.
type hanodeGetParams struct {
	HANodeIDs    opt[cuidList]            `json:"ha_nodeids" zbx:"null"`
	Filter       opt[map[string][]string] `json:"filter" as:"filter" zbx:"null" in:"name,address,status"`
	Output       opt[zoutput]             `json:"output" in:"ha_nodeid,name,address,port,lastaccess,status"`
	CountOutput  opt[bool]                `json:"countOutput" as:"flag"`
	SortField    opt[zwords]              `json:"sortfield" in:"name,lastaccess,status"`
	SortOrder    opt[zorder]              `json:"sortorder"`
	Limit        opt[int64]               `json:"limit" in:"1:2147483647" zbx:"null"`
	PreserveKeys opt[bool]                `json:"preservekeys"`
}

// cuidList is a list of CUIDs, or one CUID alone (API_CUIDS with
// API_NORMALIZE).
type cuidList []string

func (l *cuidList) decodeParam(b []byte, _ *fieldCtx) error {
	b = bytes.TrimSpace(b)
	elems := [][]byte{b}
	switch jsonKindOf(b) {
	case 'n':
		return nil
	case 's':
		// A lone string is taken as one ID only if it is a CUID; else
		// 6.0 says an array was expected (recorded from 6.0.14).
		var s string
		if json.Unmarshal(b, &s) != nil || !isCUID(s) {
			return &valueError{msg: "an array is expected"}
		}
	case 'a', 'o':
		elems = listValues(b)
	default:
		return &valueError{msg: "an array is expected"}
	}
	out := make(cuidList, 0, len(elems))
	for i, e := range elems {
		sub := strconv.Itoa(i + 1)
		var s string
		if jsonKindOf(e) != 's' || json.Unmarshal(e, &s) != nil {
			return &valueError{sub: sub, msg: "a character string is expected"}
		}
		switch {
		case len(s) != 25:
			return &valueError{sub: sub, msg: "must be 25 characters long"}
		case !isCUID(s):
			return &valueError{sub: sub, msg: "CUID is expected"}
		}
		out = append(out, s)
	}
	*l = out
	return nil
}

// isCUID reports a CUID's form: "c" and 24 lower-case letters or digits.
func isCUID(s string) bool {
	return len(s) == 25 && s[0] == 'c' && strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789") == ""
}

func (s *Server) hanodeGet(ctx context.Context, c *call) (any, error) {
	if c.user.Role < RoleSuperAdmin {
		return nil, errApp("You do not have permission to perform this operation.")
	}
	var p hanodeGetParams
	if err := decodeRuledParams(c.params, &p); err != nil {
		return nil, err
	}
	nodes := []map[string]string{{"ha_nodeid": haNodeID(), "name": "", "address": "localhost", "port": "10051",
		"lastaccess": strconv.FormatInt(time.Now().Unix(), 10), "status": "3"}}
	if s.opts.HACluster != nil {
		cl, err := s.opts.HACluster(ctx)
		if err != nil {
			return nil, errApp("Cannot read the cluster's nodes: %v", err)
		}
		nodes = nodes[:0]
		for _, n := range cl.Nodes {
			nodes = append(nodes, map[string]string{"ha_nodeid": n.ID, "name": n.Name, "address": n.Address,
				"port": strconv.Itoa(n.Port), "lastaccess": strconv.FormatInt(n.LastAccess, 10), "status": strconv.Itoa(int(n.Status))})
		}
	}
	var list []map[string]string
	for _, node := range nodes {
		if (!p.HANodeIDs.Given() || slices.Contains(p.HANodeIDs.Value, node["ha_nodeid"])) &&
			filterMatch(p.Filter.Value, func(f string) string { return node[f] }) {
			list = append(list, node)
		}
	}
	if p.CountOutput.Value {
		return strconv.Itoa(len(list)), nil
	}
	for k := len(p.SortField.Value) - 1; k >= 0; k-- {
		f, desc := p.SortField.Value[k], p.SortOrder.Value.at(k)
		slices.SortStableFunc(list, func(a, b map[string]string) int {
			c := lessValues(a[f], b[f], f != "name")
			if desc {
				return -c
			}
			return c
		})
	}
	if p.Limit.Given() && int(p.Limit.Value) < len(list) {
		list = list[:p.Limit.Value]
	}
	out := make([]object, 0, len(list))
	for _, n := range list {
		o := object{}
		for f := range strings.SplitSeq(haNodeFields, ",") {
			if p.Output.Value.has(f) {
				o[f] = n[f]
			}
		}
		out = append(out, o)
	}
	if p.PreserveKeys.Value {
		m := make(map[string]object, len(out))
		for i, o := range out {
			m[list[i]["ha_nodeid"]] = o
		}
		return m, nil
	}
	return out, nil
}
