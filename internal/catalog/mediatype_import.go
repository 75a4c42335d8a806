package catalog

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// MediaTypeSpec is a media type in Zabbix 6.0's export form
// (zabbix_export.media_types[]): enumerations by their export names,
// numbers as strings, a member left out taking 6.0's default. Which
// members a kind of media type has and their order are mediaTypeFields.
type MediaTypeSpec struct {
	Name               string  `yaml:"name"`
	Type               string  `yaml:"type"`
	SMTPServer         string  `yaml:"smtp_server"`
	SMTPPort           string  `yaml:"smtp_port"`
	SMTPHelo           string  `yaml:"smtp_helo"`
	SMTPEmail          string  `yaml:"smtp_email"`
	SMTPSecurity       string  `yaml:"smtp_security"`
	SMTPVerifyHost     string  `yaml:"smtp_verify_host"`
	SMTPVerifyPeer     string  `yaml:"smtp_verify_peer"`
	SMTPAuthentication string  `yaml:"smtp_authentication"`
	Username           string  `yaml:"username"`
	Password           *string `yaml:"password"` // nil: left out (kept by an update)
	ContentType        string  `yaml:"content_type"`
	ScriptName         string  `yaml:"script_name"`
	// Parameters are a script's strings or a webhook's name/value
	// pairs: a list, or a map by index (as some official files write
	// them: 6.0's PHP reads both as an array, in the document's order).
	Parameters       yaml.Node             `yaml:"parameters"`
	GSMModem         string                `yaml:"gsm_modem"`
	Status           string                `yaml:"status"`
	MaxSessions      string                `yaml:"max_sessions"`
	Attempts         string                `yaml:"attempts"`
	AttemptInterval  string                `yaml:"attempt_interval"`
	Script           string                `yaml:"script"`
	Timeout          string                `yaml:"timeout"`
	ProcessTags      string                `yaml:"process_tags"`
	ShowEventMenu    string                `yaml:"show_event_menu"`
	EventMenuURL     string                `yaml:"event_menu_url"`
	EventMenuName    string                `yaml:"event_menu_name"`
	Description      string                `yaml:"description"`
	MessageTemplates []MessageTemplateSpec `yaml:"message_templates"`
	Unsupported      map[string]yaml.Node  `yaml:",inline"`
}

// MessageTemplateSpec is one of a media type's message_templates.
type MessageTemplateSpec struct {
	EventSource   string               `yaml:"event_source"`
	OperationMode string               `yaml:"operation_mode"`
	Subject       string               `yaml:"subject"`
	Message       string               `yaml:"message"`
	Unsupported   map[string]yaml.Node `yaml:",inline"`
}

// The export's enumerations of media types (recorded from 6.0.14's
// exports), each name's index its number; "" is no such number.
var (
	mediaTypeNames     = []string{"EMAIL", "SCRIPT", "SMS", "", "WEBHOOK"}
	smtpSecurityNames  = []string{"NONE", "STARTTLS", "SSL_OR_TLS"}
	smtpAuthNames      = []string{"NONE", "PASSWORD"}
	contentTypeNames   = []string{"TEXT", "HTML"}
	eventSourceNames   = []string{"TRIGGERS", "DISCOVERY", "AUTOREGISTRATION", "INTERNAL", "SERVICE"}
	operationModeNames = []string{"PROBLEM", "RECOVERY", "UPDATE"}
)

// mediaEnum is enumValue, -1 for a value that is not one of names
// (or names a number 6.0 does not have).
func mediaEnum(v string, names []string, def int) int {
	n, err := enumValue(v, names, def)
	if err != nil || v != "" && names[n] == "" {
		return -1
	}
	return n
}

// validateMediaTypes checks a document's media types as 6.0's import
// validator does (recorded from 6.0.14): no member it does not know
// (`unexpected tag "foo"`), name and type present, enumerations one of
// their names (`unexpected constant "MAYBE"`). Values are checked when
// the import converts them (mediaType).
func validateMediaTypes(list []MediaTypeSpec, el *errList) {
	for i := range list {
		m := &list[i]
		p := "zabbix_export.media_types[" + strconv.Itoa(i) + "]"
		if k := firstUnsupported(m.Unsupported); k != "" {
			el.addf(p, "unexpected tag %q", k)
			continue
		}
		switch {
		case m.Name == "":
			el.addf(p, `the tag "name" is missing`)
			continue
		case m.Type == "":
			el.addf(p, `the tag "type" is missing`)
			continue
		}
		enums := []struct {
			field, v string
			names    []string
		}{
			{"type", m.Type, mediaTypeNames}, {"smtp_security", m.SMTPSecurity, smtpSecurityNames},
			{"smtp_verify_host", m.SMTPVerifyHost, noYesNames}, {"smtp_verify_peer", m.SMTPVerifyPeer, noYesNames},
			{"smtp_authentication", m.SMTPAuthentication, smtpAuthNames}, {"content_type", m.ContentType, contentTypeNames},
			{"status", m.Status, statusNames}, {"process_tags", m.ProcessTags, noYesNames},
			{"show_event_menu", m.ShowEventMenu, noYesNames},
		}
		bad := false
		for _, e := range enums {
			if mediaEnum(e.v, e.names, 0) < 0 {
				el.addf(p+"."+e.field, "unexpected constant %q", e.v)
				bad = true
				break
			}
		}
		if bad {
			continue
		}
		prms, ok := paramNodes(&m.Parameters)
		if !ok {
			el.addf(p+".parameters", "an array is expected")
			continue
		}
		for j, prm := range prms {
			pp := p + ".parameters[" + strconv.Itoa(j) + "]"
			if m.Type == "WEBHOOK" {
				if prm.Kind != yaml.MappingNode {
					el.addf(pp, "an array is expected")
					continue
				}
				for k := 0; k+1 < len(prm.Content); k += 2 {
					if n := prm.Content[k].Value; n != "name" && n != "value" {
						el.addf(pp, "unexpected tag %q", n)
					}
				}
			} else if prm.Kind != yaml.ScalarNode || prm.Tag == "!!null" {
				el.addf(pp, "a character string is expected")
			}
		}
		for j := range m.MessageTemplates {
			t := &m.MessageTemplates[j]
			tp := p + ".message_templates[" + strconv.Itoa(j) + "]"
			switch k := firstUnsupported(t.Unsupported); {
			case k != "":
				el.addf(tp, "unexpected tag %q", k)
			case t.EventSource == "":
				el.addf(tp, `the tag "event_source" is missing`)
			case t.OperationMode == "":
				el.addf(tp, `the tag "operation_mode" is missing`)
			case mediaEnum(t.EventSource, eventSourceNames, 0) < 0:
				el.addf(tp+".event_source", "unexpected constant %q", t.EventSource)
			case mediaEnum(t.OperationMode, operationModeNames, 0) < 0:
				el.addf(tp+".operation_mode", "unexpected constant %q", t.OperationMode)
			}
		}
	}
}

// paramNodes are the members of a media type's parameters: a list's, or
// the values of a map whose keys are all integers; false for anything
// else.
func paramNodes(n *yaml.Node) ([]*yaml.Node, bool) {
	switch {
	case n.Kind == 0 || n.Kind == yaml.ScalarNode && (n.Tag == "!!null" || n.Value == ""):
		return nil, true
	case n.Kind == yaml.SequenceNode:
		return n.Content, true
	case n.Kind == yaml.MappingNode:
		var out []*yaml.Node
		for k := 0; k+1 < len(n.Content); k += 2 {
			if _, err := strconv.Atoi(n.Content[k].Value); err != nil {
				return nil, false
			}
			out = append(out, n.Content[k+1])
		}
		return out, true
	}
	return nil, false
}

// firstUnsupported is the first member of m in the document's order, or
// "" if m is empty.
func firstUnsupported(m map[string]yaml.Node) string {
	first, line := "", 0
	for k, n := range m {
		if first == "" || n.Line < line || n.Line == line && k < first {
			first, line = k, n.Line
		}
	}
	return first
}

// ParamError is an imported object's value refused in the words of the
// API method the import stands for, as 6.0's import answers them (it
// creates and updates through mediatype.create and .update): Path
// "/1/maxattempts" (the object's place in its batch), Text "an integer
// is expected".
type ParamError struct{ Path, Text string }

func (e *ParamError) Error() string { return fmt.Sprintf("Invalid parameter %q: %s.", e.Path, e.Text) }

// mediaType converts m (validated by validateMediaTypes) into the media
// type it declares, 6.0's defaults in what it leaves out; i is its
// place in its batch (for ParamError).
func (m *MediaTypeSpec) mediaType(i int) (MediaType, error) {
	p := "/" + strconv.Itoa(i+1)
	num := func(field, v string, def int) (int, error) {
		if v == "" {
			return def, nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return 0, &ParamError{Path: p + "/" + field, Text: "an integer is expected"}
		}
		return n, nil
	}
	str := func(v, def string) string {
		if v == "" {
			return def
		}
		return v
	}
	mt := MediaType{Name: m.Name, Type: mediaEnum(m.Type, mediaTypeNames, 0),
		Status: mediaEnum(m.Status, statusNames, 0), Description: m.Description,
		AttemptInterval: str(m.AttemptInterval, "10s"), Timeout: "30s", ContentType: 1, SMTPPort: 25}
	var err error
	if mt.MaxSessions, err = num("maxsessions", m.MaxSessions, 1); err != nil {
		return mt, err
	}
	if mt.MaxAttempts, err = num("maxattempts", m.Attempts, 3); err != nil {
		return mt, err
	}
	if mt.MaxAttempts == 0 {
		// 0 is not "the default" here: 6.0 refuses it.
		return mt, &ParamError{Path: p + "/maxattempts", Text: "value must be one of 1-100"}
	}
	// Another kind's text members are refused (recorded from 6.0.14:
	// its mediatype.create answers "value must be empty"); their other
	// members are dropped, as 6.0 drops them.
	pw := ""
	if m.Password != nil {
		pw = *m.Password
	}
	for _, f := range []struct {
		name, v string
		kind    int
	}{
		{"smtp_server", m.SMTPServer, MediaEmail}, {"smtp_helo", m.SMTPHelo, MediaEmail}, {"smtp_email", m.SMTPEmail, MediaEmail},
		{"username", m.Username, MediaEmail}, {"passwd", pw, MediaEmail}, {"exec_path", m.ScriptName, MediaScript},
		{"gsm_modem", m.GSMModem, MediaSMS}, {"script", m.Script, MediaWebhook},
		{"event_menu_url", m.EventMenuURL, MediaWebhook}, {"event_menu_name", m.EventMenuName, MediaWebhook},
	} {
		if f.v != "" && f.kind != mt.Type {
			return mt, &ParamError{Path: p + "/" + f.name, Text: "value must be empty"}
		}
	}
	switch mt.Type {
	case MediaEmail:
		// 6.0's order (recorded from 6.0.14's import of an email media
		// type without them); mediatype.create checks the rest.
		for _, f := range []struct{ name, v string }{{"smtp_server", m.SMTPServer}, {"smtp_helo", m.SMTPHelo}, {"smtp_email", m.SMTPEmail}} {
			if f.v == "" {
				return mt, &ParamError{Path: p + "/" + f.name, Text: "cannot be empty"}
			}
		}
		mt.SMTPServer, mt.SMTPHelo, mt.SMTPEmail, mt.Username = m.SMTPServer, m.SMTPHelo, m.SMTPEmail, m.Username
		if mt.SMTPPort, err = num("smtp_port", m.SMTPPort, 25); err != nil {
			return mt, err
		}
		mt.SMTPSecurity = mediaEnum(m.SMTPSecurity, smtpSecurityNames, 0)
		mt.SMTPVerifyHost = mediaEnum(m.SMTPVerifyHost, noYesNames, 0)
		mt.SMTPVerifyPeer = mediaEnum(m.SMTPVerifyPeer, noYesNames, 0)
		mt.SMTPAuth = mediaEnum(m.SMTPAuthentication, smtpAuthNames, 0)
		mt.ContentType = mediaEnum(m.ContentType, contentTypeNames, 1)
		if m.Password != nil {
			mt.Passwd = *m.Password
		}
	case MediaScript:
		mt.ExecPath = m.ScriptName
		// 6.0 stores a script's parameters one a line, each line ended.
		var b strings.Builder
		prms, _ := paramNodes(&m.Parameters)
		for _, prm := range prms {
			b.WriteString(prm.Value + "\n")
		}
		mt.ExecParams = b.String()
	case MediaSMS:
		mt.GSMModem = m.GSMModem
	case MediaWebhook:
		mt.Script, mt.Timeout = m.Script, str(m.Timeout, "30s")
		mt.ProcessTags = mediaEnum(m.ProcessTags, noYesNames, 0)
		mt.ShowEventMenu = mediaEnum(m.ShowEventMenu, noYesNames, 0)
		mt.EventMenuURL, mt.EventMenuName = m.EventMenuURL, m.EventMenuName
		prms, _ := paramNodes(&m.Parameters)
		for _, prm := range prms {
			var mp MediaParam
			for k := 0; k+1 < len(prm.Content); k += 2 {
				switch prm.Content[k].Value {
				case "name":
					mp.Name = prm.Content[k+1].Value
				case "value":
					mp.Value = prm.Content[k+1].Value
				}
			}
			mt.Parameters = append(mt.Parameters, mp)
		}
	}
	seen := map[[2]int]bool{}
	for j, t := range m.MessageTemplates {
		k := [2]int{mediaEnum(t.EventSource, eventSourceNames, 0), mediaEnum(t.OperationMode, operationModeNames, 0)}
		if seen[k] {
			// Recorded from 6.0.14.
			return mt, &ParamError{Path: fmt.Sprintf("%s/message_templates/%d", p, j+1),
				Text: fmt.Sprintf("value (eventsource, recovery)=(%d, %d) already exists", k[0], k[1])}
		}
		seen[k] = true
		mt.Templates = append(mt.Templates, MessageTemplate{EventSource: k[0], Recovery: k[1], Subject: t.Subject, Message: t.Message})
	}
	return mt, nil
}

// MediaTypeCheck validates a media type an import creates (m.ID 0) or
// updates, as mediatype.create and .update would, in cfg (the
// configuration being edited); i is m's place in its batch. It may set
// defaults in m.
type MediaTypeCheck func(cfg *AlertConfig, m *MediaType, i int) error

// importMediaTypes merges a document's media types into a copy of cur
// under rule, as 6.0's import does (recorded from 6.0.14): matched by
// name, the last of a name winning; those missing created (if
// createMissing), then those existing updated whole (if
// updateExisting; an update keeps the ID, and the SMTP password when
// the document leaves it out, since Peregrine's exports never write
// it). It returns nil if nothing changes.
func importMediaTypes(cur *AlertConfig, list []MediaTypeSpec, rule ImportRule, check MediaTypeCheck) (*AlertConfig, int, int, error) {
	if len(list) == 0 || !rule.CreateMissing && !rule.UpdateExisting {
		return nil, 0, 0, nil
	}
	byName := map[string]*MediaType{}
	for _, m := range cur.MediaTypes {
		byName[m.Name] = m
	}
	var creates, updates []*MediaTypeSpec
	last := map[string]int{}
	for i := range list {
		last[list[i].Name] = i
	}
	for i := range list {
		if last[list[i].Name] != i {
			continue
		}
		if byName[list[i].Name] == nil {
			if rule.CreateMissing {
				creates = append(creates, &list[i])
			}
		} else if rule.UpdateExisting {
			updates = append(updates, &list[i])
		}
	}
	next := cur.clone()
	created, updated := 0, 0
	for i, s := range creates {
		m, err := s.mediaType(i)
		if err == nil && check != nil {
			err = check(next, &m, i)
		}
		if err != nil {
			return nil, 0, 0, err
		}
		m.ID = next.NextID("mediatype")
		next.MediaTypes[m.ID] = &m
		created++
	}
	for i, s := range updates {
		old := byName[s.Name]
		m, err := s.mediaType(i)
		if err != nil {
			return nil, 0, 0, err
		}
		m.ID = old.ID
		if s.Password == nil && m.Type == MediaEmail {
			m.Passwd = old.Passwd
		}
		if check != nil {
			if err := check(next, &m, i); err != nil {
				return nil, 0, 0, err
			}
		}
		if sameMediaType(old, &m) {
			continue
		}
		next.MediaTypes[m.ID] = &m
		updated++
	}
	if created+updated == 0 {
		return nil, 0, 0, nil
	}
	next.Revision++
	return next, created, updated, nil
}

// sameMediaType reports whether a and b store the same, the order of
// parameters and message templates aside (an export sorts them, so that
// an export imported again is no change; empty and nil lists alike).
func sameMediaType(a, b *MediaType) bool {
	x, y := *a, *b
	cmpParam := func(p, q MediaParam) int { return cmp.Or(cmp.Compare(p.Name, q.Name), cmp.Compare(p.Value, q.Value)) }
	cmpTmpl := func(p, q MessageTemplate) int {
		return cmp.Or(cmp.Compare(p.EventSource, q.EventSource), cmp.Compare(p.Recovery, q.Recovery),
			cmp.Compare(p.Subject, q.Subject), cmp.Compare(p.Message, q.Message))
	}
	if !slices.Equal(slices.SortedFunc(slices.Values(x.Parameters), cmpParam), slices.SortedFunc(slices.Values(y.Parameters), cmpParam)) ||
		!slices.Equal(slices.SortedFunc(slices.Values(x.Templates), cmpTmpl), slices.SortedFunc(slices.Values(y.Templates), cmpTmpl)) {
		return false
	}
	x.Parameters, y.Parameters, x.Templates, y.Templates = nil, nil, nil, nil
	return reflect.DeepEqual(x, y)
}

// editImport is editLocked running fn and then importing a document's
// media types under rule (importMediaTypes) in the same transaction,
// counted in res; the notification configuration is published once the
// transaction commits.
func (c *Catalog) editImport(ctx context.Context, list []MediaTypeSpec, rule ImportRule, check MediaTypeCheck, res *ApplyResult,
	fn func(e *Edit) error) (EditResult, error) {
	var alerts *AlertConfig
	er, err := c.editLocked(ctx, func(e *Edit) error {
		if err := fn(e); err != nil {
			return err
		}
		var err error
		alerts, res.MediaTypesCreated, res.MediaTypesUpdated, err = importMediaTypes(c.alerts.Load(), list, rule, check)
		if err != nil || alerts == nil {
			return err
		}
		return e.writeAlerts(alerts)
	})
	if err != nil {
		return er, err
	}
	if alerts != nil {
		c.alerts.Store(alerts)
		c.notifyAlerts()
	}
	return er, nil
}

// writeAlerts writes cfg whole in the Edit's transaction (beginning it,
// and marking the Edit changed): an import's media types commit or roll
// back with its templates.
func (e *Edit) writeAlerts(cfg *AlertConfig) error {
	// A statement that changes nothing begins the transaction.
	if _, err := e.exec("UPDATE catalog_meta SET revision = revision WHERE id = 1"); err != nil {
		return e.fail(err)
	}
	if err := writeAlertsTx(context.WithoutCancel(e.ctx), e.tx, cfg); err != nil {
		return e.fail(fmt.Errorf("cannot store the alert configuration: %w", err))
	}
	return nil
}
