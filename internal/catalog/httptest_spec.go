package catalog

import (
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"
)

// HTTPTestSpec is a template's web scenario in Zabbix 6.0's export form
// (templates[].httptests), with its defaults: members absent take
// them, as 6.0's export omits them (recorded from 6.0.14's export).
type HTTPTestSpec struct {
	UUID           string               `yaml:"uuid"`
	Name           string               `yaml:"name"`
	Delay          string               `yaml:"delay"`
	Attempts       string               `yaml:"attempts"`
	Agent          *string              `yaml:"agent"`
	HTTPProxy      string               `yaml:"http_proxy"`
	Variables      []HTTPField          `yaml:"variables"`
	Headers        []HTTPField          `yaml:"headers"`
	Status         string               `yaml:"status"`
	Authentication string               `yaml:"authentication"`
	HTTPUser       string               `yaml:"http_user"`
	HTTPPassword   string               `yaml:"http_password"`
	VerifyPeer     string               `yaml:"verify_peer"`
	VerifyHost     string               `yaml:"verify_host"`
	SSLCertFile    string               `yaml:"ssl_cert_file"`
	SSLKeyFile     string               `yaml:"ssl_key_file"`
	SSLKeyPassword string               `yaml:"ssl_key_password"`
	Steps          []HTTPStepSpec       `yaml:"steps"`
	Tags           []TagSpec            `yaml:"tags"`
	Unsupported    map[string]yaml.Node `yaml:",inline"`
}

// HTTPStepSpec is one step in the export form; Posts is raw data (a
// string) or form fields (a list of name/value).
type HTTPStepSpec struct {
	Name            string               `yaml:"name"`
	URL             string               `yaml:"url"`
	QueryFields     []HTTPField          `yaml:"query_fields"`
	Posts           yaml.Node            `yaml:"posts"`
	Variables       []HTTPField          `yaml:"variables"`
	Headers         []HTTPField          `yaml:"headers"`
	FollowRedirects string               `yaml:"follow_redirects"`
	RetrieveMode    string               `yaml:"retrieve_mode"`
	Timeout         string               `yaml:"timeout"`
	Required        string               `yaml:"required"`
	StatusCodes     string               `yaml:"status_codes"`
	Unsupported     map[string]yaml.Node `yaml:",inline"`
}

// The export's names of a scenario's enumerations (6.0's).
var (
	httpAuthNames     = []string{"NONE", "BASIC", "NTLM", "KERBEROS", "DIGEST"}
	statusNames       = []string{"ENABLED", "DISABLED"}
	noYesNames        = []string{"NO", "YES"}
	retrieveModeNames = []string{"BODY", "HEADERS", "BOTH"}
)

// specHTTPTest is a validated scenario of the import, its host unset.
type specHTTPTest struct {
	field string
	t     HTTPTest
}

// httpTestSpecs validates a template's scenarios.
func httpTestSpecs(ts []HTTPTestSpec, p string, el *errList) []specHTTPTest {
	var out []specHTTPTest
	names := map[string]bool{}
	for i := range ts {
		x := &ts[i]
		f := p + "[" + strconv.Itoa(i) + "]"
		refuseUnsupported(f, x.Unsupported, el)
		t := HTTPTest{UUID: x.UUID, Name: x.Name, HTTPTestFields: DefaultHTTPTestFields}
		if names[x.Name] {
			el.addf(f+".name", "web scenario %q is declared twice", x.Name)
		}
		names[x.Name] = true
		if x.Delay != "" {
			t.Delay = x.Delay
		}
		if x.Attempts != "" {
			n, err := strconv.Atoi(x.Attempts)
			if err != nil {
				el.addf(f+".attempts", "%q is not a number", x.Attempts)
			}
			t.Retries = n
		}
		if x.Agent != nil {
			t.Agent = *x.Agent
		}
		t.HTTPProxy, t.HTTPUser, t.HTTPPassword = x.HTTPProxy, x.HTTPUser, x.HTTPPassword
		t.SSLCertFile, t.SSLKeyFile, t.SSLKeyPassword = x.SSLCertFile, x.SSLKeyFile, x.SSLKeyPassword
		t.Variables, t.Headers = slices.Clone(x.Variables), slices.Clone(x.Headers)
		enum := func(name, v string, names []string, dst *int) {
			n, err := enumValue(v, names, 0)
			if err != nil {
				el.add(f+"."+name, err)
			}
			*dst = n
		}
		enum("status", x.Status, statusNames, &t.Status)
		enum("authentication", x.Authentication, httpAuthNames, &t.Authentication)
		enum("verify_peer", x.VerifyPeer, noYesNames, &t.VerifyPeer)
		enum("verify_host", x.VerifyHost, noYesNames, &t.VerifyHost)
		for _, tg := range x.Tags {
			t.Tags = append(t.Tags, Tag(tg))
		}
		checkTags(f+".tags", t.Tags, el)
		for j := range x.Steps {
			xs := &x.Steps[j]
			sf := f + ".steps[" + strconv.Itoa(j) + "]"
			refuseUnsupported(sf, xs.Unsupported, el)
			st := HTTPStep{Name: xs.Name, No: j + 1, URL: xs.URL, Timeout: DefaultStepTimeout, Required: xs.Required,
				StatusCodes: xs.StatusCodes, QueryFields: slices.Clone(xs.QueryFields), Variables: slices.Clone(xs.Variables),
				Headers: slices.Clone(xs.Headers)}
			if xs.Timeout != "" {
				st.Timeout = xs.Timeout
			}
			follow := 1
			if xs.FollowRedirects != "" {
				enum := func(v string, names []string, dst *int) {
					n, err := enumValue(v, names, 0)
					if err != nil {
						el.add(sf+".follow_redirects", err)
					}
					*dst = n
				}
				enum(xs.FollowRedirects, noYesNames, &follow)
			}
			st.FollowRedirects = follow
			n, err := enumValue(xs.RetrieveMode, retrieveModeNames, 0)
			if err != nil {
				el.add(sf+".retrieve_mode", err)
			}
			st.RetrieveMode = n
			switch xs.Posts.Kind {
			case 0:
			case yaml.ScalarNode:
				st.Posts = xs.Posts.Value
			case yaml.SequenceNode:
				if err := xs.Posts.Decode(&st.PostFields); err != nil {
					el.addf(sf+".posts", "a list of name and value is expected: %v", err)
				}
				st.PostType = StepPostForm
			default:
				el.addf(sf+".posts", "a string or a list of name and value is expected")
			}
			t.Steps = append(t.Steps, st)
		}
		checkHTTPTestFields(f, &t, el)
		out = append(out, specHTTPTest{field: f, t: t})
	}
	return out
}

// applyHTTPTests creates or updates template tmpl's scenarios, by uuid
// else by name; a step keeps its ID (and items) when its name stays.
func (e *Edit) applyHTTPTests(tmpl uint64, ts []specHTTPTest) error {
	var creates, updates []HTTPTest
	var createAt, updateAt []string
	for i := range ts {
		t := ts[i].t
		t.HostID = tmpl
		t.Steps = slices.Clone(t.Steps)
		var cur *HTTPTest
		for _, o := range e.HostHTTPTests(tmpl) {
			if t.UUID != "" && o.UUID == t.UUID || cur == nil && o.Name == t.Name {
				cur = o
			}
		}
		if cur == nil {
			creates = append(creates, t)
			createAt = append(createAt, ts[i].field)
			continue
		}
		t.ID, t.UUID, t.ItemIDs = cur.ID, cur.UUID, cur.ItemIDs
		for j := range t.Steps {
			for _, s := range cur.Steps {
				if s.Name == t.Steps[j].Name {
					t.Steps[j].ID, t.Steps[j].ItemIDs = s.ID, s.ItemIDs
				}
			}
		}
		if !sameHTTPTest(&t, cur) {
			updates = append(updates, t)
			updateAt = append(updateAt, ts[i].field)
		}
	}
	if _, err := e.CreateHTTPTests(creates); err != nil {
		return renameBatchErr(err, "httptests[", createAt)
	}
	if err := e.UpdateHTTPTests(updates); err != nil {
		return renameBatchErr(err, "httptests[", updateAt)
	}
	return nil
}
