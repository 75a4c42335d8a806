package api

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/alert"
	"github.com/peregrine-mon/peregrine/internal/auth"
	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// mediatype.get, .create, .update and .delete.

// mediaTypeParams are the objects of mediatype.create and .update
// (params_alert.go's dialect).
type mediaTypeParams struct {
	// The media type's members; the former decoder named their wrong
	// types after the catalog's type it embedded: "/1/MediaType/name".
	mediaTypeMembers `errname:"MediaType"`
	// Stored and returned: an SMS media type's modem and the frontend's
	// event menu.
	GSMModem      opt[string] `json:"gsm_modem"`
	ShowEventMenu opt[int64]  `json:"show_event_menu"`
	EventMenuURL  opt[string] `json:"event_menu_url"`
	EventMenuName opt[string] `json:"event_menu_name"`
}

// mediaType is the media type p gives.
func (p *mediaTypeParams) mediaType() catalog.MediaType {
	m := p.mediaTypeMembers.mediaType()
	m.GSMModem, m.ShowEventMenu, m.EventMenuURL, m.EventMenuName = p.GSMModem.Value, int(p.ShowEventMenu.Value), p.EventMenuURL.Value, p.EventMenuName.Value
	return m
}

// mediaTypeMembers are catalog.MediaType's members.
type mediaTypeMembers struct {
	MediaTypeID     opt[uint64]                  `json:"mediatypeid"`
	Name            opt[string]                  `json:"name"`
	Type            opt[int64]                   `json:"type"`
	Status          opt[int64]                   `json:"status"`
	Description     opt[string]                  `json:"description"`
	SMTPServer      opt[string]                  `json:"smtp_server"`
	SMTPPort        opt[int64]                   `json:"smtp_port"`
	SMTPHelo        opt[string]                  `json:"smtp_helo"`
	SMTPEmail       opt[string]                  `json:"smtp_email"`
	SMTPSecurity    opt[int64]                   `json:"smtp_security"`
	SMTPVerifyPeer  opt[int64]                   `json:"smtp_verify_peer"`
	SMTPVerifyHost  opt[int64]                   `json:"smtp_verify_host"`
	SMTPAuth        opt[int64]                   `json:"smtp_authentication"`
	Username        opt[string]                  `json:"username"`
	Passwd          opt[string]                  `json:"passwd"`
	ContentType     opt[int64]                   `json:"content_type"`
	ExecPath        opt[string]                  `json:"exec_path"`
	ExecParams      opt[string]                  `json:"exec_params"`
	Parameters      opt[[]mediaParamParams]      `json:"parameters" as:"objects"`
	Script          opt[string]                  `json:"script"`
	Timeout         opt[string]                  `json:"timeout"`
	ProcessTags     opt[int64]                   `json:"process_tags"`
	MaxSessions     opt[int64]                   `json:"maxsessions"`
	MaxAttempts     opt[int64]                   `json:"maxattempts"`
	AttemptInterval opt[string]                  `json:"attempt_interval"`
	Templates       opt[[]messageTemplateParams] `json:"message_templates" as:"objects"`
}

// mediaParamParams is one of a webhook's "parameters".
type mediaParamParams struct {
	Name  opt[string] `json:"name"`
	Value opt[string] `json:"value"`
}

// messageTemplateParams is one of "message_templates".
type messageTemplateParams struct {
	EventSource opt[int64]  `json:"eventsource"`
	Recovery    opt[int64]  `json:"recovery"`
	Subject     opt[string] `json:"subject"`
	Message     opt[string] `json:"message"`
}

// mediaType is the media type the members give.
func (p *mediaTypeMembers) mediaType() catalog.MediaType {
	m := catalog.MediaType{ID: p.MediaTypeID.Value, Name: p.Name.Value, Type: int(p.Type.Value), Status: int(p.Status.Value),
		Description: p.Description.Value, SMTPServer: p.SMTPServer.Value, SMTPPort: int(p.SMTPPort.Value), SMTPHelo: p.SMTPHelo.Value,
		SMTPEmail: p.SMTPEmail.Value, SMTPSecurity: int(p.SMTPSecurity.Value), SMTPVerifyPeer: int(p.SMTPVerifyPeer.Value),
		SMTPVerifyHost: int(p.SMTPVerifyHost.Value), SMTPAuth: int(p.SMTPAuth.Value), Username: p.Username.Value, Passwd: p.Passwd.Value,
		ContentType: int(p.ContentType.Value), ExecPath: p.ExecPath.Value, ExecParams: p.ExecParams.Value, Script: p.Script.Value,
		Timeout: p.Timeout.Value, ProcessTags: int(p.ProcessTags.Value), MaxSessions: int(p.MaxSessions.Value),
		MaxAttempts: int(p.MaxAttempts.Value), AttemptInterval: p.AttemptInterval.Value}
	if l := p.Parameters.Value; l != nil {
		m.Parameters = make([]catalog.MediaParam, len(l))
		for i, prm := range l {
			m.Parameters[i] = catalog.MediaParam{Name: prm.Name.Value, Value: prm.Value.Value}
		}
	}
	if l := p.Templates.Value; l != nil {
		m.Templates = make([]catalog.MessageTemplate, len(l))
		for i, t := range l {
			m.Templates[i] = catalog.MessageTemplate{EventSource: int(t.EventSource.Value), Recovery: int(t.Recovery.Value),
				Subject: t.Subject.Value, Message: t.Message.Value}
		}
	}
	return m
}

// CheckMediaType checks m, the i-th media type of a mediatype.create or
// .update in cfg (the configuration being edited), with 6.0's rules and
// words, setting its defaults; it is catalog.ImportRules'
// CheckMediaType for configuration.import and `peregrine import`.
func CheckMediaType(cfg *catalog.AlertConfig, m *catalog.MediaType, i int) error {
	p := fmt.Sprintf("/%d", i+1)
	if m.MaxAttempts == 0 {
		m.MaxAttempts = 3
	}
	if m.AttemptInterval == "" {
		m.AttemptInterval = "10s"
	}
	if m.Timeout == "" {
		m.Timeout = "30s"
	}
	if m.SMTPPort == 0 {
		m.SMTPPort = 25
	}
	dur := func(name, v string, lo, hi time.Duration) error {
		d, err := alert.ParsePeriod(v)
		if err != nil || d < lo || d > hi {
			return errParams(`Invalid parameter "%s/%s": value must be one of %d-%d.`, p, name, int(lo.Seconds()), int(hi.Seconds()))
		}
		return nil
	}
	switch {
	case strings.TrimSpace(m.Name) == "":
		return empty(i, "name")
	case m.Type != catalog.MediaEmail && m.Type != catalog.MediaScript && m.Type != catalog.MediaSMS && m.Type != catalog.MediaWebhook:
		// SMS (2) is stored, as Zabbix 6.0's default "SMS" is: its alerts
		// fail with the reason (Peregrine has no GSM modem).
		return oneOf(i, "type", "0, 1, 2, 4")
	case m.ShowEventMenu != 0 && m.ShowEventMenu != 1:
		return oneOf(i, "show_event_menu", "0, 1")
	case m.Status != 0 && m.Status != 1:
		return oneOf(i, "status", "0, 1")
	case m.MaxSessions < 0 || m.MaxSessions > 100:
		return errParams(`Invalid parameter "%s/maxsessions": value must be one of 0-100.`, p)
	case m.MaxAttempts < 1 || m.MaxAttempts > 100:
		return errParams(`Invalid parameter "%s/maxattempts": value must be one of 1-100.`, p)
	case m.SMTPSecurity < 0 || m.SMTPSecurity > 2:
		return oneOf(i, "smtp_security", "0, 1, 2")
	case m.SMTPAuth != 0 && m.SMTPAuth != 1:
		return oneOf(i, "smtp_authentication", "0, 1")
	case m.SMTPPort < 1 || m.SMTPPort > 65535:
		return errParams(`Invalid parameter "%s/smtp_port": value must be one of 0-65535.`, p)
	}
	if err := dur("attempt_interval", m.AttemptInterval, 0, time.Hour); err != nil {
		return err
	}
	if err := dur("timeout", m.Timeout, time.Second, time.Minute); err != nil {
		return err
	}
	switch m.Type {
	case catalog.MediaEmail:
		if m.SMTPServer == "" {
			return empty(i, "smtp_server")
		}
		if m.SMTPEmail == "" {
			return empty(i, "smtp_email")
		}
	case catalog.MediaScript:
		if m.ExecPath == "" {
			return empty(i, "exec_path")
		}
	case catalog.MediaWebhook:
		hasURL := false
		for _, prm := range m.Parameters {
			if prm.Name == "" {
				return errParams(`Invalid parameter "%s/parameters": parameter name cannot be empty.`, p)
			}
			hasURL = hasURL || strings.EqualFold(prm.Name, "URL")
		}
		if strings.TrimSpace(m.Script) == "" && !hasURL {
			return empty(i, "script")
		}
	}
	for j, t := range m.Templates {
		// Templates of every event source are stored, as Zabbix's
		// default media types have them; Peregrine's events use the
		// trigger ones (eventsource 0).
		if t.EventSource < 0 || t.EventSource > 4 || t.Recovery < 0 || t.Recovery > 2 {
			return errParams(`Invalid parameter "%s/message_templates/%d": eventsource must be one of 0-4 and recovery one of 0-2.`, p, j+1)
		}
	}
	if err := tooLong(i, "name", m.Name, 100); err != nil {
		return err
	}
	for _, o := range cfg.MediaTypes {
		if o.Name == m.Name && o.ID != m.ID {
			return errParams(`Media type "%s" already exists.`, m.Name)
		}
	}
	return nil
}

func (s *Server) mediatypeCreate(ctx context.Context, c *call) (any, error) {
	objs, err := alertObjects(c.params)
	if err != nil {
		return nil, err
	}
	var out []uint64
	err = s.opts.Alerting.EditAlerts(ctx, func(cfg *catalog.AlertConfig) error {
		for i, o := range objs {
			if o.has("mediatypeid") {
				return errParams(`Invalid parameter "/%d": unexpected parameter "mediatypeid".`, i+1)
			}
			for _, need := range []string{"name", "type"} {
				if !o.has(need) {
					return missing(i, need)
				}
			}
			if !o.has("maxsessions") {
				o = append(o[:len(o):len(o)], member{"maxsessions", []byte("1")}) // Zabbix's default; 0 is "unlimited"
			}
			if !o.has("content_type") {
				o = append(o[:len(o):len(o)], member{"content_type", []byte("1")}) // Zabbix 6.0's default: HTML (recorded)
			}
			if v, ok := o.get("maxattempts"); ok && string(v) == "0" {
				// 0 would read as "not given" (the default 3) below.
				return errParams(`Invalid parameter "/%d/maxattempts": value must be one of 1-100.`, i+1)
			}
			var p mediaTypeParams
			if err := decodeAlert(o, fmt.Sprintf("/%d", i+1), &p); err != nil {
				return err
			}
			m := p.mediaType()
			if err := CheckMediaType(cfg, &m, i); err != nil {
				return err
			}
			m.ID = cfg.NextID("mediatype")
			cfg.MediaTypes[m.ID] = &m
			out = append(out, m.ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.opts.Logger.Info("api: media types created", "by", c.user.Username, "mediatypeids", out)
	return idResult("mediatypeids", out), nil
}

func (s *Server) mediatypeUpdate(ctx context.Context, c *call) (any, error) {
	objs, err := alertObjects(c.params)
	if err != nil {
		return nil, err
	}
	var out []uint64
	err = s.opts.Alerting.EditAlerts(ctx, func(cfg *catalog.AlertConfig) error {
		for i, o := range objs {
			id, old, err := existingOf(o, i, "mediatypeid", cfg.MediaTypes)
			if err != nil {
				return err
			}
			if v, ok := o.get("maxattempts"); ok && string(v) == "0" {
				return errParams(`Invalid parameter "/%d/maxattempts": value must be one of 1-100.`, i+1)
			}
			var p mediaTypeParams
			if err := decodeAlert(alertOver(old, o), fmt.Sprintf("/%d", i+1), &p); err != nil {
				return err
			}
			m := p.mediaType()
			m.ID = id
			if err := CheckMediaType(cfg, &m, i); err != nil {
				return err
			}
			cfg.MediaTypes[id] = &m
			out = append(out, id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("mediatypeids", out), nil
}

func (s *Server) mediatypeDelete(ctx context.Context, c *call) (any, error) {
	list, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	err = s.opts.Alerting.EditAlerts(ctx, func(cfg *catalog.AlertConfig) error {
		for _, id := range list {
			m := cfg.MediaTypes[id]
			if m == nil {
				return errNoPermissions
			}
			for _, a := range cfg.SortedActions() {
				for _, ops := range [][]catalog.Operation{a.Operations, a.RecoveryOperations, a.UpdateOperations} {
					for _, op := range ops {
						if op.MediaTypeID == id {
							return errApp(`Media type "%s" is used by action "%s".`, m.Name, a.Name)
						}
					}
				}
			}
			delete(cfg.MediaTypes, id)
			// Users' media of the type go with it, as in Zabbix.
			for uid, ms := range cfg.Medias {
				cfg.Medias[uid] = slices.DeleteFunc(ms, func(um catalog.UserMedia) bool { return um.MediaTypeID == id })
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("mediatypeids", list), nil
}

func mediaTypeObject(m *catalog.MediaType) object {
	// Name and value only, in their stored order, as Zabbix 6.0 returns
	// a webhook's parameters (recorded from 6.0.14: a "sortorder" here
	// made Ansible's media type module report "changed" on every run).
	params := []object{}
	for _, p := range m.Parameters {
		params = append(params, object{"name": p.Name, "value": p.Value})
	}
	return object{
		"mediatypeid": u64(m.ID), "name": m.Name, "type": istr(m.Type), "status": istr(m.Status), "description": m.Description,
		"smtp_server": m.SMTPServer, "smtp_port": istr(m.SMTPPort), "smtp_helo": m.SMTPHelo, "smtp_email": m.SMTPEmail,
		"smtp_security": istr(m.SMTPSecurity), "smtp_verify_peer": istr(m.SMTPVerifyPeer), "smtp_verify_host": istr(m.SMTPVerifyHost),
		"smtp_authentication": istr(m.SMTPAuth), "username": m.Username, "content_type": istr(m.ContentType),
		"exec_path": m.ExecPath, "exec_params": m.ExecParams, "parameters": field{params}, "script": m.Script, "timeout": m.Timeout,
		"process_tags": istr(m.ProcessTags), "maxsessions": istr(m.MaxSessions), "maxattempts": istr(m.MaxAttempts),
		"attempt_interval": m.AttemptInterval, "gsm_modem": m.GSMModem, "show_event_menu": istr(m.ShowEventMenu),
		"event_menu_url": m.EventMenuURL, "event_menu_name": m.EventMenuName,
		// 6.0 answers the SMTP password; Peregrine never returns a
		// secret, so the member is there, always empty.
		"passwd": "",
	}
}

// mediatypeGetParams are mediatype.get's parameters.
type mediatypeGetParams struct {
	getParams
	MediaTypeIDs           opt[ids] `json:"mediatypeids"`
	SelectMessageTemplates opt[sel] `json:"selectMessageTemplates"`
	SelectUsers            opt[sel] `json:"selectUsers"`
	// SelectQueue (a Peregrine addition) adds each media type's backlog,
	// "queue": {"alerts", "escalations"}, when the server has AlertQueues.
	SelectQueue opt[any] `json:"selectQueue"`
}

func (s *Server) mediatypeGet(ctx context.Context, c *call) (any, error) {
	var p mediatypeGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	cfg := s.opts.Alerting.AlertConfig()
	want := idSet(p.MediaTypeIDs.Value)
	// selectUsers gives the users as user.get has them (recorded from
	// 6.0.14: a field list gives those fields and the ID).
	var accounts map[uint64]*auth.Account
	if p.SelectUsers.Value.list() && s.opts.Accounts != nil {
		as, err := s.opts.Accounts.Accounts(ctx)
		if err != nil {
			return nil, s.accountErr(err, "/", c)
		}
		accounts = make(map[uint64]*auth.Account, len(as))
		for i := range as {
			accounts[as[i].ID] = &as[i]
		}
	}
	var queues map[uint64]alert.QueueState
	if aq, ok := s.opts.Alerting.(AlertQueues); ok && p.SelectQueue.Given() {
		queues = aq.Queues()
	}
	var objs []object
	for _, m := range cfg.SortedMediaTypes() {
		if want != nil && !want[m.ID] {
			continue
		}
		o := mediaTypeObject(m)
		if p.SelectMessageTemplates.Value.list() {
			ts := []object{}
			for _, t := range m.Templates {
				ts = append(ts, object{"eventsource": istr(t.EventSource), "recovery": istr(t.Recovery), "subject": t.Subject, "message": t.Message})
			}
			o["message_templates"] = ts
		}
		if p.SelectUsers.Value.list() {
			us := []object{}
			for _, uid := range slices.Sorted(maps.Keys(cfg.Medias)) {
				if !slices.ContainsFunc(cfg.Medias[uid], func(um catalog.UserMedia) bool { return um.MediaTypeID == m.ID }) {
					continue
				}
				if a := accounts[uid]; a != nil {
					us = append(us, accountObject(a))
				} else {
					us = append(us, object{"userid": u64(uid)})
				}
			}
			o["users"] = nonNil(p.SelectUsers.Value.shape(us, "userid"))
		}
		if p.SelectQueue.Given() {
			q := queues[m.ID]
			o["queue"] = object{"alerts": istr(q.Alerts), "escalations": istr(q.Escalations)}
		}
		objs = append(objs, o)
	}
	// 6.0 sorts media types by mediatypeid only (recorded: "name" is
	// refused).
	return p.apply(objs, "mediatypeid", "mediatypeid")
}
