package catalog

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/zbx/delay"
)

// HTTPTest is a Zabbix 6.0 web scenario (httptest) of a host or
// template: its settings with httptest.get's names, its steps in order
// and its tags. A template's scenario is copied to what links the
// template (TemplateID: the template's scenario the copy follows), and
// every scenario has the items 6.0 makes for it (WebItems), kept by
// syncWebItems. It MUST NOT be modified.
type HTTPTest struct {
	ID         uint64 `json:"-"`
	HostID     uint64 `json:"-"`
	TemplateID uint64 `json:"-"`
	UUID       string `json:"-"` // templates' scenarios only, as in 6.0
	Name       string `json:"-"`
	HTTPTestFields
	Steps []HTTPStep `json:"steps"`
	Tags  []Tag      `json:"tags,omitempty"`
	// ItemIDs are the scenario's own items (WebScenarioIn, Fail,
	// Error), kept by syncWebItems, so that a rename renames them.
	ItemIDs [3]uint64 `json:"itemids"`
}

// HTTPTestFields are a scenario's settings with Zabbix 6.0's names and
// defaults (DefaultHTTPTestFields, recorded from 6.0.14's httptest.get
// of a scenario created with none of them).
type HTTPTestFields struct {
	Delay          string `json:"delay"`          // update interval, 1s..1d or a user macro
	Status         int    `json:"status"`         // 0 enabled, 1 disabled
	Agent          string `json:"agent"`          // the User-Agent header
	Authentication int    `json:"authentication"` // 0 none, 1 basic, 2 NTLM, 3 Kerberos, 4 digest
	HTTPUser       string `json:"http_user"`
	HTTPPassword   string `json:"http_password"` // never returned by the API
	HTTPProxy      string `json:"http_proxy"`
	Retries        int    `json:"retries"` // 1..10: attempts of a failing step
	SSLCertFile    string `json:"ssl_cert_file"`
	SSLKeyFile     string `json:"ssl_key_file"`
	SSLKeyPassword string `json:"ssl_key_password"` // never returned by the API
	VerifyPeer     int    `json:"verify_peer"`
	VerifyHost     int    `json:"verify_host"`
	// Headers and Variables are the scenario's, in their order; every
	// step sends the headers and sees the variables ({name}).
	Headers   []HTTPField `json:"headers,omitempty"`
	Variables []HTTPField `json:"variables,omitempty"`
}

// DefaultHTTPTestFields are Zabbix 6.0's defaults of a new scenario.
var DefaultHTTPTestFields = HTTPTestFields{Delay: "1m", Agent: "Zabbix", Retries: 1}

// HTTPStep is one step of a scenario, with httptest.get's step fields.
// Posts is raw post data (PostType 0); PostFields are form fields
// (PostType 1), as 6.0 returns posts as a list for those.
type HTTPStep struct {
	ID              uint64      `json:"httpstepid"`
	Name            string      `json:"name"`
	No              int         `json:"no"`
	URL             string      `json:"url"`
	Timeout         string      `json:"timeout"` // 1s..1h or a user macro; default "15s"
	Posts           string      `json:"posts,omitempty"`
	PostFields      []HTTPField `json:"post_fields,omitempty"`
	PostType        int         `json:"post_type"` // 0 raw, 1 form
	Required        string      `json:"required,omitempty"`
	StatusCodes     string      `json:"status_codes,omitempty"`
	FollowRedirects int         `json:"follow_redirects"` // 0, 1 (default)
	RetrieveMode    int         `json:"retrieve_mode"`    // 0 body, 1 headers, 2 both
	Headers         []HTTPField `json:"headers,omitempty"`
	Variables       []HTTPField `json:"variables,omitempty"`
	QueryFields     []HTTPField `json:"query_fields,omitempty"`
	// ItemIDs are the step's items (WebStepIn, Time, RspCode), kept by
	// syncWebItems.
	ItemIDs [3]uint64 `json:"itemids"`
}

// A step's post_type: raw data (Posts) or form fields (PostFields).
const (
	StepPostRaw  = 0
	StepPostForm = 1
)

// DefaultStepTimeout is a step's timeout when none is given (6.0's).
const DefaultStepTimeout = "15s"

// httpTestSchema holds web scenarios (its own migration,
// migrateHTTPTests): one row per scenario, its settings, steps and tags
// as JSON (read once per snapshot load, never queried by field), and
// one row per step only to hand out step IDs that are never reused.
// IF NOT EXISTS: downgrade chains of the migration tests leave them.
const httpTestSchema = `
CREATE TABLE IF NOT EXISTS httptests (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	host_id     INTEGER NOT NULL,
	template_id INTEGER NOT NULL DEFAULT 0,
	uuid        TEXT NOT NULL DEFAULT '',
	name        TEXT NOT NULL,
	config      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS httptests_host ON httptests (host_id);
CREATE TABLE IF NOT EXISTS httpsteps (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	httptest_id INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS httpsteps_test ON httpsteps (httptest_id);
`

// migrateHTTPTests is the migration to the version with web scenarios,
// kept on its own so that schema changes made in parallel renumber
// cleanly.
func migrateHTTPTests() string { return httpTestSchema }

// HTTPTests returns every web scenario of hosts and templates,
// ascending by ID. The slice MUST NOT be modified.
func (s *Snapshot) HTTPTests() []HTTPTest {
	if s.ext == nil {
		return nil
	}
	return s.ext.webs
}

// HTTPTest returns the scenario with the ID, or nil.
func (s *Snapshot) HTTPTest(id uint64) *HTTPTest {
	if s.ext == nil {
		return nil
	}
	if i, ok := s.ext.webByID[id]; ok {
		return &s.ext.webs[i]
	}
	return nil
}

func loadHTTPTests(ctx context.Context, tx *sql.Tx) ([]HTTPTest, error) {
	var out []HTTPTest
	err := queryEach(ctx, tx, "SELECT id, host_id, template_id, uuid, name, config FROM httptests ORDER BY id", func(r *sql.Rows) error {
		var t HTTPTest
		var config string
		if err := r.Scan(&t.ID, &t.HostID, &t.TemplateID, &t.UUID, &t.Name, &config); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(config), &t); err != nil {
			return fmt.Errorf("%w: web scenario %d: %v", ErrCorrupt, t.ID, err)
		}
		out = append(out, t)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot load web scenarios: %w", err)
	}
	return out, nil
}

func encodeHTTPTest(t *HTTPTest) string {
	b, err := json.Marshal(t)
	if err != nil {
		panic("BUG: HTTPTest does not marshal: " + err.Error())
	}
	return string(b)
}

// Web item kinds: the items 6.0 makes per scenario and per step, in the
// order it makes them (recorded from 6.0.14's item IDs).
const (
	WebScenarioIn = iota // web.test.in[scenario,,bps]: average download speed of the steps run, B/s
	WebScenarioFail
	WebScenarioError
	WebStepIn
	WebStepTime
	WebStepRspCode
)

// WebItemSpec is one item a scenario needs: its key, name, value type and
// units as 6.0 makes them.
type WebItemSpec struct {
	Kind      int
	Step      int // index into Steps for step items, -1 otherwise
	Key, Name string
	ValueType uint8 // history.ValueType's numbers
	Units     string
}

// WebItemKey is the key of a scenario's item of kind (step "" for the
// scenario's own): Zabbix 6.0's web.test.* keys, the names quoted as an
// item key parameter needs.
func WebItemKey(kind int, scenario, step string) string {
	s, st := quoteKeyParam(scenario), quoteKeyParam(step)
	switch kind {
	case WebScenarioIn:
		return "web.test.in[" + s + ",,bps]"
	case WebScenarioFail:
		return "web.test.fail[" + s + "]"
	case WebScenarioError:
		return "web.test.error[" + s + "]"
	case WebStepIn:
		return "web.test.in[" + s + "," + st + ",bps]"
	case WebStepTime:
		return "web.test.time[" + s + "," + st + ",resp]"
	case WebStepRspCode:
		return "web.test.rspcode[" + s + "," + st + "]"
	}
	panic("BUG: unknown web item kind " + strconv.Itoa(kind))
}

// quoteKeyParam writes s as one item key parameter: as is when it can
// be, else quoted with its quotes escaped, as Zabbix quotes them.
func quoteKeyParam(s string) string {
	if !strings.ContainsAny(s, `,]"`) && !strings.HasPrefix(s, " ") && !strings.HasPrefix(s, "[") {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}

// WebItems returns the items t needs, in 6.0's order: the scenario's
// three, then three per step.
func (t *HTTPTest) WebItems() []WebItemSpec {
	out := make([]WebItemSpec, 0, 3+3*len(t.Steps))
	q := func(s string) string { return `"` + s + `"` }
	out = append(out,
		WebItemSpec{WebScenarioIn, -1, WebItemKey(WebScenarioIn, t.Name, ""), "Download speed for scenario " + q(t.Name) + ".", 0, "Bps"},
		WebItemSpec{WebScenarioFail, -1, WebItemKey(WebScenarioFail, t.Name, ""), "Failed step of scenario " + q(t.Name) + ".", 3, ""},
		WebItemSpec{WebScenarioError, -1, WebItemKey(WebScenarioError, t.Name, ""), "Last error message of scenario " + q(t.Name) + ".", 1, ""})
	for i, st := range t.Steps {
		of := " for step " + q(st.Name) + " of scenario " + q(t.Name) + "."
		out = append(out,
			WebItemSpec{WebStepIn, i, WebItemKey(WebStepIn, t.Name, st.Name), "Download speed" + of, 0, "Bps"},
			WebItemSpec{WebStepTime, i, WebItemKey(WebStepTime, t.Name, st.Name), "Response time" + of, 0, "s"},
			WebItemSpec{WebStepRspCode, i, WebItemKey(WebStepRspCode, t.Name, st.Name), "Response code" + of, 3, ""})
	}
	return out
}

// webEdit is an Edit's overlay of web scenarios.
type webEdit struct {
	tests map[uint64]*HTTPTest // nil value: deleted
	fresh []uint64
}

func (e *Edit) webs() *webEdit {
	x := e.extra()
	if x.web == nil {
		x.web = &webEdit{tests: map[uint64]*HTTPTest{}}
	}
	return x.web
}

// HTTPTest returns the current scenario with the ID, or nil.
func (e *Edit) HTTPTest(id uint64) *HTTPTest {
	if e.ext != nil && e.ext.web != nil {
		if t, ok := e.ext.web.tests[id]; ok {
			return t
		}
	}
	return e.old.HTTPTest(id)
}

// allHTTPTests returns the current scenarios, ascending by ID.
func (e *Edit) allHTTPTests() []*HTTPTest {
	var out []*HTTPTest
	for i := range e.old.HTTPTests() {
		if t := e.HTTPTest(e.old.ext.webs[i].ID); t != nil {
			out = append(out, t)
		}
	}
	if e.ext != nil && e.ext.web != nil {
		for _, id := range e.ext.web.fresh {
			if t := e.ext.web.tests[id]; t != nil {
				out = append(out, t)
			}
		}
	}
	return out
}

// HTTPTestByName returns the scenario of host or template host named
// name in the Edit's view, or nil.
func (e *Edit) HTTPTestByName(host uint64, name string) *HTTPTest {
	for _, t := range e.allHTTPTests() {
		if t.HostID == host && t.Name == name {
			return t
		}
	}
	return nil
}

// HostHTTPTests returns the scenarios of a host or template in the
// Edit's view.
func (e *Edit) HostHTTPTests(host uint64) []*HTTPTest {
	var out []*HTTPTest
	for _, t := range e.allHTTPTests() {
		if t.HostID == host {
			out = append(out, t)
		}
	}
	return out
}

// stepIDs gives each step of t without an ID a new one.
func (e *Edit) stepIDs(t *HTTPTest) error {
	for i := range t.Steps {
		if t.Steps[i].ID != 0 {
			continue
		}
		id, err := e.exec("INSERT INTO httpsteps (httptest_id) VALUES (?)", t.ID)
		if err != nil {
			return e.fail(fmt.Errorf("cannot create step %q of web scenario %q: %w", t.Steps[i].Name, t.Name, err))
		}
		t.Steps[i].ID = id
	}
	return nil
}

func (e *Edit) insertHTTPTest(t *HTTPTest) (uint64, error) {
	t.Steps = slices.Clone(t.Steps)
	id, err := e.exec("INSERT INTO httptests (host_id, template_id, uuid, name, config) VALUES (?, ?, ?, ?, '{}')",
		t.HostID, t.TemplateID, t.UUID, t.Name)
	if err != nil {
		return 0, e.fail(fmt.Errorf("cannot create web scenario %q: %w", t.Name, err))
	}
	t.ID = id
	w := e.webs()
	w.tests[id] = t
	w.fresh = append(w.fresh, id)
	return id, e.writeHTTPTest(t)
}

func (e *Edit) writeHTTPTest(t *HTTPTest) error {
	if err := e.stepIDs(t); err != nil {
		return err
	}
	if _, err := e.exec("DELETE FROM httpsteps WHERE httptest_id = ? AND id NOT IN (SELECT value FROM json_each(?))", t.ID, stepIDList(t)); err != nil {
		return e.fail(fmt.Errorf("cannot update the steps of web scenario %d: %w", t.ID, err))
	}
	_, err := e.exec("UPDATE httptests SET host_id = ?, template_id = ?, uuid = ?, name = ?, config = ? WHERE id = ?",
		t.HostID, t.TemplateID, t.UUID, t.Name, encodeHTTPTest(t), t.ID)
	if err != nil {
		return e.fail(fmt.Errorf("cannot update web scenario %d: %w", t.ID, err))
	}
	e.webs().tests[t.ID] = t
	e.changed = true
	return nil
}

func stepIDList(t *HTTPTest) string {
	ids := make([]uint64, len(t.Steps))
	for i, s := range t.Steps {
		ids[i] = s.ID
	}
	b, _ := json.Marshal(ids)
	return string(b)
}

func (e *Edit) removeHTTPTest(id uint64) error {
	if _, err := e.exec("DELETE FROM httptests WHERE id = ?", id); err != nil {
		return e.fail(fmt.Errorf("cannot delete web scenario %d: %w", id, err))
	}
	if _, err := e.exec("DELETE FROM httpsteps WHERE httptest_id = ?", id); err != nil {
		return e.fail(fmt.Errorf("cannot delete web scenario %d: %w", id, err))
	}
	e.webs().tests[id] = nil
	return nil
}

// checkHTTPTest checks a scenario with Zabbix 6.0's rules (the API
// checks them first in 6.0's words; the import relies on these): a
// name, steps with names and numbers unique in the scenario, a host or
// template, the settings' ranges.
func (e *Edit) checkHTTPTest(p string, t *HTTPTest, el *errList) {
	if e.host(t.HostID) == nil {
		el.add(p+".hostid", notFound("host", t.HostID))
	}
	checkHTTPTestFields(p, t, el)
}

// checkHTTPTestFields is checkHTTPTest without the host.
func checkHTTPTestFields(p string, t *HTTPTest, el *errList) {
	if t.Name == "" {
		el.addf(p+".name", "cannot be empty")
	} else if n := len([]rune(t.Name)); n > 64 {
		el.addf(p+".name", "value is too long (%d characters, the limit is 64)", n)
	}
	if !timeOrMacro(t.Delay, 1, 86400) {
		el.addf(p+".delay", "value must be one of 1-86400 (seconds, a time suffix or a user macro)")
	}
	in := func(f string, v, lo, hi int) {
		if v < lo || v > hi {
			el.addf(p+"."+f, "value must be one of %d-%d", lo, hi)
		}
	}
	in("retries", t.Retries, 1, 10)
	in("status", t.Status, 0, 1)
	in("authentication", t.Authentication, 0, 4)
	in("verify_peer", t.VerifyPeer, 0, 1)
	in("verify_host", t.VerifyHost, 0, 1)
	checkVars(p+".variables", t.Variables, el)
	if len(t.Steps) == 0 {
		el.addf(p+".steps", "cannot be empty")
	}
	names, nos := map[string]bool{}, map[int]bool{}
	for i, s := range t.Steps {
		sp := p + ".steps[" + strconv.Itoa(i) + "]"
		if names[s.Name] {
			el.addf(sp+".name", "step %q is there twice", s.Name)
		}
		if nos[s.No] {
			el.addf(sp+".no", "step number %d is there twice", s.No)
		}
		names[s.Name], nos[s.No] = true, true
		if s.Name == "" || s.URL == "" {
			el.addf(sp, "a step needs a name and a URL")
		}
		if !timeOrMacro(s.Timeout, 1, 3600) {
			el.addf(sp+".timeout", "value must be one of 1-3600 (seconds, a time suffix or a user macro)")
		}
		in := func(f string, v, lo, hi int) {
			if v < lo || v > hi {
				el.addf(sp+"."+f, "value must be one of %d-%d", lo, hi)
			}
		}
		in("follow_redirects", s.FollowRedirects, 0, 1)
		in("retrieve_mode", s.RetrieveMode, 0, 2)
		in("post_type", s.PostType, 0, 1)
		if _, err := ParseStatusCodes(s.StatusCodes); err != nil && !strings.Contains(s.StatusCodes, "{") {
			el.add(sp+".status_codes", err)
		}
		checkVars(sp+".variables", s.Variables, el)
	}
}

func checkVars(p string, vs []HTTPField, el *errList) {
	seen := map[string]bool{}
	for i, v := range vs {
		if len(v.Name) < 3 || v.Name[0] != '{' || v.Name[len(v.Name)-1] != '}' {
			el.addf(p+"["+strconv.Itoa(i)+"].name", "%q is not enclosed in {} or is malformed", v.Name)
		} else if seen[v.Name] {
			el.addf(p+"["+strconv.Itoa(i)+"].name", "variable %q is there twice", v.Name)
		}
		seen[v.Name] = true
	}
}

// timeOrMacro reports whether v is a time of lo..hi seconds or a user
// macro.
func timeOrMacro(v string, lo, hi int64) bool {
	if strings.HasPrefix(v, "{$") && strings.HasSuffix(v, "}") {
		return true
	}
	n, err := delay.Seconds(v)
	return err == nil && n >= lo && n <= hi
}

// CreateHTTPTests creates web scenarios (ID and TemplateID ignored) and
// returns their IDs in order, with their items. A scenario's name is
// unique on its host.
func (e *Edit) CreateHTTPTests(ts []HTTPTest) ([]uint64, error) {
	if e.err != nil {
		return nil, e.err
	}
	var el errList
	batch := map[string]bool{}
	for i := range ts {
		p := "httptests[" + strconv.Itoa(i) + "]"
		t := &ts[i]
		t.TemplateID = 0
		e.checkHTTPTest(p, t, &el)
		k := strconv.FormatUint(t.HostID, 10) + "\x00" + t.Name
		if batch[k] || e.HTTPTestByName(t.HostID, t.Name) != nil {
			el.addf(p+".name", "web scenario %q already exists", t.Name)
		}
		batch[k] = true
	}
	if err := el.err(); err != nil {
		return nil, err
	}
	ids := make([]uint64, len(ts))
	for i := range ts {
		t := ts[i]
		t.UUID = ""
		if e.host(t.HostID).IsTemplate {
			t.UUID = cmp.Or(ts[i].UUID, NewUUID())
		}
		for j := range t.Steps {
			t.Steps[j].ID = 0
		}
		id, err := e.insertHTTPTest(&t)
		if err != nil {
			return nil, err
		}
		ids[i] = id
	}
	return ids, nil
}

// UpdateHTTPTests replaces scenarios by ID with ts (each ts[i].ID set;
// a step keeps its ID when ts[i].Steps[j].ID names one of the
// scenario's steps). A copy of a template's scenario accepts only what
// 6.0 lets a host change on one (status, delay and the other fields
// but its name and steps), which the caller has checked.
func (e *Edit) UpdateHTTPTests(ts []HTTPTest) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	for i := range ts {
		p := "httptests[" + strconv.Itoa(i) + "]"
		t := &ts[i]
		cur := e.HTTPTest(t.ID)
		if cur == nil {
			el.add(p+".httptestid", notFound("web scenario", t.ID))
			continue
		}
		t.HostID, t.TemplateID, t.UUID = cur.HostID, cur.TemplateID, cur.UUID
		e.checkHTTPTest(p, t, &el)
		if o := e.HTTPTestByName(t.HostID, t.Name); o != nil && o.ID != t.ID {
			el.addf(p+".name", "web scenario %q already exists", t.Name)
		}
		for j := range t.Steps {
			if id := t.Steps[j].ID; id != 0 && !slices.ContainsFunc(cur.Steps, func(s HTTPStep) bool { return s.ID == id }) {
				el.add(p+".steps["+strconv.Itoa(j)+"].httpstepid", notFound("web scenario step", id))
			}
		}
	}
	if err := el.err(); err != nil {
		return err
	}
	for i := range ts {
		t := ts[i]
		t.Steps = slices.Clone(t.Steps)
		if err := e.writeHTTPTest(&t); err != nil {
			return err
		}
	}
	return nil
}

// DeleteHTTPTests deletes scenarios by ID with their copies and items;
// a copy of a template's scenario cannot be deleted alone (6.0's rule).
func (e *Edit) DeleteHTTPTests(ids []uint64) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	for i, id := range ids {
		t := e.HTTPTest(id)
		if t == nil {
			el.add("httptests["+strconv.Itoa(i)+"]", notFound("web scenario", id))
		} else if t.TemplateID != 0 && !e.propagating {
			el.addf("httptests["+strconv.Itoa(i)+"]", "cannot delete templated web scenario %q", t.Name)
		}
	}
	dupIDs("httptests", ids, &el)
	if err := el.err(); err != nil {
		return err
	}
	for _, id := range ids {
		if err := e.removeHTTPTest(id); err != nil {
			return err
		}
	}
	return nil // copies and items go in syncHTTPTests
}
