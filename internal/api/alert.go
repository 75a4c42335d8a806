package api

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/alert"
	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// alertGet is alert.get: the alert engine's alerts (messages and remote
// commands) that the caller may see.
// alertGetParams are alert.get's parameters.
type alertGetParams struct {
	getParams
	AlertIDs         opt[ids]   `json:"alertids"`
	ActionIDs        opt[ids]   `json:"actionids"`
	EventIDs         opt[ids]   `json:"eventids"`
	ObjectIDs        opt[ids]   `json:"objectids"`
	MediaTypeIDs     opt[ids]   `json:"mediatypeids"`
	UserIDs          opt[ids]   `json:"userids"`
	HostIDs          opt[ids]   `json:"hostids"`
	GroupIDs         opt[ids]   `json:"groupids"`
	EventSource      opt[int64] `json:"eventsource"`
	EventObject      opt[int64] `json:"eventobject"`
	TimeFrom         opt[int64] `json:"time_from"`
	TimeTill         opt[int64] `json:"time_till"`
	SelectHosts      opt[any]   `json:"selectHosts"`
	SelectMediatypes opt[any]   `json:"selectMediatypes"`
	SelectUsers      opt[any]   `json:"selectUsers"`
}

func (s *Server) alertGet(ctx context.Context, c *call) (any, error) {
	var p alertGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	cfg := s.opts.Alerting.AlertConfig()
	sets := []map[uint64]bool{idSet(p.AlertIDs.Value), idSet(p.ActionIDs.Value), idSet(p.EventIDs.Value), idSet(p.ObjectIDs.Value), idSet(p.MediaTypeIDs.Value), idSet(p.UserIDs.Value)}
	hostSet, groupSet := idSet(p.HostIDs.Value), idSet(p.GroupIDs.Value)
	in := func(m map[uint64]bool, id uint64) bool { return m == nil || m[id] }
	hostsOf := func(al *alert.Alert) []*catalog.Host {
		var hs []*catalog.Host
		if t := snap.Trigger(al.TriggerID); t != nil {
			for _, hid := range t.HostIDs {
				if h := snap.HostByID(hid); h != nil {
					hs = append(hs, h)
				}
			}
		}
		return hs
	}
	if (p.EventSource.Given() && p.EventSource.Value != 0) || (p.EventObject.Given() && p.EventObject.Value != 0) {
		return p.apply(nil, "alertid")
	}
	list := s.opts.Alerting.Alerts(func(al *alert.Alert) bool {
		if !in(sets[0], al.ID) || !in(sets[1], al.ActionID) || !(in(sets[2], al.EventID) || sets[2][al.PEventID]) ||
			!in(sets[3], al.TriggerID) || !in(sets[4], al.MediaTypeID) || !in(sets[5], al.UserID) {
			return false
		}
		if p.TimeFrom.Given() && al.Clock < p.TimeFrom.Value || p.TimeTill.Given() && al.Clock > p.TimeTill.Value {
			return false
		}
		return true
	})
	var objs []object
	for i := range list {
		al := &list[i]
		hs := hostsOf(al)
		// Readable only if every host of the trigger is (as problems).
		if !a.all() {
			ok := len(hs) > 0
			for _, h := range hs {
				ok = ok && a.canRead(h)
			}
			if !ok {
				continue
			}
		}
		if hostSet != nil || groupSet != nil {
			hit := false
			for _, h := range hs {
				hit = hit || hostSet[h.ID]
				for _, g := range h.GroupIDs {
					hit = hit || groupSet[g]
				}
			}
			if !hit {
				continue
			}
		}
		o := object{"alertid": u64(al.ID), "actionid": u64(al.ActionID), "eventid": u64(al.EventID), "p_eventid": u64(al.PEventID),
			"userid": u64(al.UserID), "clock": strconv.FormatInt(al.Clock, 10), "mediatypeid": u64(al.MediaTypeID), "sendto": al.SendTo,
			"subject": al.Subject, "message": al.Message, "status": istr(al.Status), "retries": istr(al.Retries), "error": al.Error,
			"esc_step": istr(al.EscStep), "alerttype": istr(al.AlertType), "acknowledgeid": u64(al.AckID), "parameters": "{}"}
		if al.AlertType == alert.AlertCommand {
			// Peregrine's additions for remote commands: the host the
			// command ran for and what it printed.
			o["hostid"], o["output"] = u64(al.HostID), al.Output
		}
		if len(al.Params) > 0 {
			pm := map[string]string{}
			for _, prm := range al.Params {
				pm[prm.Name] = prm.Value
			}
			b, _ := json.Marshal(pm)
			o["parameters"] = string(b)
		}
		if p.SelectHosts.Given() {
			ho := []object{}
			for _, h := range hs {
				ho = append(ho, hostObject(h))
			}
			o["hosts"] = ho
		}
		if p.SelectMediatypes.Given() {
			mo := []object{}
			if m := cfg.MediaTypes[al.MediaTypeID]; m != nil {
				mo = append(mo, mediaTypeObject(m))
			}
			o["mediatypes"] = mo
		}
		if p.SelectUsers.Given() {
			o["users"] = []object{{"userid": u64(al.UserID)}}
		}
		objs = append(objs, o)
	}
	return p.apply(objs, "alertid", "alertid", "clock", "eventid", "mediatypeid", "sendto", "status")
}
