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
func (s *Server) alertGet(ctx context.Context, c *call) (any, error) {
	var p struct {
		getParams
		AlertIDs         ids     `json:"alertids"`
		ActionIDs        ids     `json:"actionids"`
		EventIDs         ids     `json:"eventids"`
		ObjectIDs        ids     `json:"objectids"`
		MediaTypeIDs     ids     `json:"mediatypeids"`
		UserIDs          ids     `json:"userids"`
		HostIDs          ids     `json:"hostids"`
		GroupIDs         ids     `json:"groupids"`
		EventSource      flexInt `json:"eventsource"`
		EventObject      flexInt `json:"eventobject"`
		TimeFrom         flexInt `json:"time_from"`
		TimeTill         flexInt `json:"time_till"`
		SelectHosts      any     `json:"selectHosts"`
		SelectMediatypes any     `json:"selectMediatypes"`
		SelectUsers      any     `json:"selectUsers"`
	}
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	cfg := s.opts.Alerting.AlertConfig()
	sets := []map[uint64]bool{idSet(p.AlertIDs), idSet(p.ActionIDs), idSet(p.EventIDs), idSet(p.ObjectIDs), idSet(p.MediaTypeIDs), idSet(p.UserIDs)}
	hostSet, groupSet := idSet(p.HostIDs), idSet(p.GroupIDs)
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
	if (p.EventSource.set && p.EventSource.v != 0) || (p.EventObject.set && p.EventObject.v != 0) {
		return p.apply(nil, "alertid")
	}
	list := s.opts.Alerting.Alerts(func(al *alert.Alert) bool {
		if !in(sets[0], al.ID) || !in(sets[1], al.ActionID) || !(in(sets[2], al.EventID) || sets[2][al.PEventID]) ||
			!in(sets[3], al.TriggerID) || !in(sets[4], al.MediaTypeID) || !in(sets[5], al.UserID) {
			return false
		}
		if p.TimeFrom.set && al.Clock < p.TimeFrom.v || p.TimeTill.set && al.Clock > p.TimeTill.v {
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
		if p.SelectHosts != nil {
			ho := []object{}
			for _, h := range hs {
				ho = append(ho, hostObject(h))
			}
			o["hosts"] = ho
		}
		if p.SelectMediatypes != nil {
			mo := []object{}
			if m := cfg.MediaTypes[al.MediaTypeID]; m != nil {
				mo = append(mo, mediaTypeObject(m))
			}
			o["mediatypes"] = mo
		}
		if p.SelectUsers != nil {
			o["users"] = []object{{"userid": u64(al.UserID)}}
		}
		objs = append(objs, o)
	}
	return p.apply(objs, "alertid", "alertid", "clock", "eventid", "mediatypeid", "sendto", "status")
}
