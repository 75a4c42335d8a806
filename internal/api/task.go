package api

import (
	"context"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// taskCheckNow is Zabbix's task type 6, "check now".
const taskCheckNow = 6

// taskParams is one task of task.create in the Zabbix 6.0 form
// ({"type": 6, "request": {"itemid": "N"}}). Type 1 (diagnostic
// information) has no counterpart and is refused; proxy_hostid is
// accepted and ignored, as Zabbix ignores it for check-now tasks.
type taskParams struct {
	Type        opt[int64]   `json:"type"`
	Request     opt[taskReq] `json:"request" as:"object"`
	ProxyHostID opt[ignored] `json:"proxy_hostid"`
}

// taskReq is a task's "request".
type taskReq struct {
	ItemID opt[uint64] `json:"itemid"`
}

// checkNowTypes are the item types "check now" applies to: those the
// server polls. Trapper and active agent items are pushed, so Zabbix
// refuses them ("wrong item type").
func checkNowType(t catalog.ItemType) bool {
	switch t {
	case catalog.ZabbixAgent, catalog.SimpleCheck, catalog.Internal, catalog.External, catalog.ODBC, catalog.Script, catalog.HTTPAgent, catalog.SNMPAgent, catalog.JMX,
		catalog.SSHAgent, catalog.TelnetAgent: // recorded from 6.0.14: "Execute now" takes SSH and Telnet items
		return true
	}
	return false
}

// taskCreate serves task.create for type 6: every item must exist, be
// readable by the caller (Zabbix 6.0 lets users with read access "Execute
// now" by default), be of a polled type and be monitored (item and host
// enabled). Then all of them are handed to Options.CheckNow at once. The
// task IDs are sequence numbers of this server process: Zabbix's tasks
// are rows the server picks up, Peregrine's poller acts on the request
// at once and keeps no task to look up later.
func (s *Server) taskCreate(ctx context.Context, c *call) (any, error) {
	var ps []taskParams
	if err := decodeValidatorObjects(c.params, &ps); err != nil {
		return nil, err
	}
	for i := range ps {
		p := &ps[i]
		switch {
		case !p.Type.Given():
			return nil, missing(i, "type")
		case p.Type.Value != taskCheckNow:
			return nil, errParams(`Invalid parameter "/%d/type": value must be %d (check now); diagnostic information tasks are not supported.`, i+1, taskCheckNow)
		case !p.Request.Given():
			return nil, missing(i, "request")
		case !p.Request.Value.ItemID.Set:
			return nil, errParams(`Invalid parameter "/%d/request": the parameter "itemid" is missing.`, i+1)
		}
	}
	if s.opts.CheckNow == nil {
		return nil, errApp("Cannot send request: this server does not poll items.")
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	items := make([]uint64, len(ps))
	for i := range ps {
		it := snap.Item(ps[i].Request.Value.ItemID.Value)
		switch {
		case it == nil || !a.canRead(it.Host):
			return nil, errNoPermissions
		case !checkNowType(it.Type):
			return nil, errApp("Cannot send request: wrong item type.")
		case !it.Enabled || !it.Host.Enabled:
			return nil, errApp(`Cannot send request: item "%s" on host "%s" is not monitored.`, it.Name, it.Host.Name)
		}
		items[i] = it.ID
	}
	if err := s.opts.CheckNow.CheckNow(items); err != nil {
		return nil, errApp("Cannot send request: %v.", err)
	}
	ids := make([]uint64, len(items))
	for i := range ids {
		ids[i] = s.taskSeq.Add(1)
	}
	return idResult("taskids", ids), nil
}

// taskGetParams are task.get's parameters, checked as 6.0's validator
// checks them (recorded from 6.0.14: no filter, search, sort, limit or
// countOutput).
type taskGetParams struct {
	TaskIDs      opt[ids]     `json:"taskids" zbx:"null"`
	Output       opt[zoutput] `json:"output" in:"taskid,type,status,clock,ttl,proxy_hostid,request,result"`
	PreserveKeys opt[bool]    `json:"preservekeys"`
}

// taskGet serves task.get (super admins only). Zabbix 6.0 lists the
// diagnostic information tasks (type 1 in task.create) with their
// requests and results, never "check now" tasks (recorded from 6.0.14:
// task.get answers [] right after a check now). Peregrine refuses
// diagnostic information tasks and keeps no check now task, so the list
// is always empty; the parameters are checked all the same.
func (s *Server) taskGet(_ context.Context, c *call) (any, error) {
	if err := superAdminOnly(c, "task.get"); err != nil {
		return nil, err
	}
	var p taskGetParams
	if err := decodeRuledParams(c.params, &p); err != nil {
		return nil, err
	}
	return []object{}, nil
}
