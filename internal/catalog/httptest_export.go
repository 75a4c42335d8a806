package catalog

import (
	"slices"
	"strconv"
)

// httptests is owner's web scenarios in 6.0's export form (recorded
// from 6.0.14's export: members in its order, defaults omitted,
// scenarios by name, steps by number); a template's carry their uuid.
// Copies of a template's scenarios are not exported with their owner,
// as 6.0 leaves inherited objects to their template.
func (x *exporter) httptests(owner uint64, withUUID bool) *exportNode {
	var ts []*HTTPTest
	for i := range x.s.HTTPTests() {
		if t := &x.s.HTTPTests()[i]; t.HostID == owner && t.TemplateID == 0 {
			ts = append(ts, t)
		}
	}
	l := newList()
	for _, t := range natSortedBy(ts, func(a, b *HTTPTest) int { return natCaseCmp(a.Name, b.Name) }) {
		m := newMap()
		if withUUID {
			m.req("uuid", t.UUID)
		}
		m.req("name", t.Name)
		m.str("delay", t.Delay, DefaultHTTPTestFields.Delay)
		m.str("attempts", strconv.Itoa(t.Retries), "1")
		m.str("agent", t.Agent, DefaultHTTPTestFields.Agent)
		m.str("http_proxy", t.HTTPProxy, "")
		m.sub("variables", exportFields(t.Variables, true), false)
		m.sub("headers", exportFields(t.Headers, true), false)
		m.str("status", enumName(t.Status, statusNames), "ENABLED")
		m.str("authentication", enumName(t.Authentication, httpAuthNames), "NONE")
		m.str("http_user", t.HTTPUser, "")
		m.str("http_password", t.HTTPPassword, "")
		m.str("verify_peer", enumName(t.VerifyPeer, noYesNames), "NO")
		m.str("verify_host", enumName(t.VerifyHost, noYesNames), "NO")
		m.str("ssl_cert_file", t.SSLCertFile, "")
		m.str("ssl_key_file", t.SSLKeyFile, "")
		m.str("ssl_key_password", t.SSLKeyPassword, "")
		steps := newList()
		for _, st := range slices.SortedStableFunc(slices.Values(t.Steps), func(a, b HTTPStep) int { return a.No - b.No }) {
			s := newMap()
			s.req("name", st.Name)
			s.req("url", st.URL)
			s.sub("query_fields", exportFields(st.QueryFields, false), false)
			if st.PostType == StepPostForm {
				s.sub("posts", exportFields(st.PostFields, false), false)
			} else {
				s.str("posts", st.Posts, "")
			}
			s.sub("variables", exportFields(st.Variables, true), false)
			s.sub("headers", exportFields(st.Headers, true), false)
			s.str("follow_redirects", enumName(st.FollowRedirects, noYesNames), "YES")
			s.str("retrieve_mode", enumName(st.RetrieveMode, retrieveModeNames), "BODY")
			s.str("timeout", st.Timeout, DefaultStepTimeout)
			s.str("required", st.Required, "")
			s.str("status_codes", st.StatusCodes, "")
			steps.add(s)
		}
		m.sub("steps", steps, true)
		m.sub("tags", exportTags(t.Tags), false)
		l.add(m)
	}
	return l
}
