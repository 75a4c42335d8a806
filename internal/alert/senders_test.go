package alert

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// jsHook is a webhook script in Zabbix's form: parse value, POST JSON
// with a header, fail on a status other than 200.
const jsHook = `
var p = JSON.parse(value);
var req = new HttpRequest();
req.addHeader('Content-Type: application/json');
req.addHeader('X-Token: ' + p.token);
var resp = req.post(p.url, JSON.stringify({text: p.subject + ': ' + p.message}));
if (req.getStatus() != 200) {
	throw 'Response code: ' + req.getStatus() + ' ' + resp;
}
Zabbix.log(4, 'sent');
return 'OK';
`

func TestWebhookScript(t *testing.T) {
	type got struct {
		token string
		body  map[string]string
	}
	ch := make(chan got, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]string
		_ = json.NewDecoder(r.Body).Decode(&b)
		ch <- got{r.Header.Get("X-Token"), b}
		if b["text"] == "fail: now" {
			w.WriteHeader(500)
			_, _ = io.WriteString(w, "broken")
		}
	}))
	defer srv.Close()
	s := &WebhookSender{}
	mt := &catalog.MediaType{Type: catalog.MediaWebhook, Script: jsHook}
	a := &Alert{Params: []Param{{"url", srv.URL}, {"token", "t0k"}, {"subject", "Problem"}, {"message", "CPU high on ünïcode"}}}
	if err := s.Send(context.Background(), mt, a); err != nil {
		t.Fatal(err)
	}
	g := <-ch
	if g.token != "t0k" || g.body["text"] != "Problem: CPU high on ünïcode" {
		t.Fatalf("received %+v", g)
	}
	a.Params[2].Value, a.Params[3].Value = "fail", "now"
	err := s.Send(context.Background(), mt, a)
	<-ch
	if err == nil || err.Error() != "Response code: 500 broken" {
		t.Fatalf("500: %v", err)
	}
}

func TestWebhookPlainAndFailures(t *testing.T) {
	got := make(chan map[string]string, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		var b map[string]string
		_ = json.NewDecoder(r.Body).Decode(&b)
		got <- b
	})
	mux.HandleFunc("/500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down for maintenance", 500) })
	hang := make(chan struct{})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(make([]byte, 5000)) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer close(hang)
	s := &WebhookSender{MaxBody: 1000}
	plain := &catalog.MediaType{Type: catalog.MediaWebhook}
	if err := s.Send(context.Background(), plain, &Alert{Params: []Param{{"URL", srv.URL + "/ok"}, {"event", "42"}}}); err != nil {
		t.Fatal(err)
	}
	if b := <-got; b["event"] != "42" || len(b) != 1 {
		t.Fatalf("plain body %v", b)
	}
	err := s.Send(context.Background(), plain, &Alert{Params: []Param{{"URL", srv.URL + "/500"}}})
	if err == nil || !strings.Contains(err.Error(), "500 Internal Server Error: down for maintenance") {
		t.Fatalf("500: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err = s.Send(ctx, &catalog.MediaType{Script: "var r = new HttpRequest(); r.get(JSON.parse(value).u);"}, &Alert{Params: []Param{{"u", srv.URL + "/hang"}}})
	if err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("hang: %v", err)
	}
	err = s.Send(context.Background(), &catalog.MediaType{Script: "var r = new HttpRequest(); r.get(JSON.parse(value).u);"}, &Alert{Params: []Param{{"u", srv.URL + "/big"}}})
	if err == nil || !strings.Contains(err.Error(), "larger than 1000 bytes") {
		t.Fatalf("big body: %v", err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	if err := s.Send(ctx2, &catalog.MediaType{Script: "while (true) {}"}, &Alert{}); err == nil || !strings.Contains(err.Error(), "execution timeout") {
		t.Fatalf("endless script: %v", err)
	}
}

func TestScriptSender(t *testing.T) {
	testutil.Need(t, "sh", "dash")
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write("notify.sh", `printf '%s|' "$@" > `+out+"\n")
	write("fail.sh", "echo 'cannot reach pager' >&2; exit 3\n")
	write("slow.sh", "sleep 30 & echo $! > "+filepath.Join(dir, "child")+"; wait\n")
	s := &ScriptSender{Dir: dir}
	a := &Alert{Params: []Param{{Value: "ops@example.com"}, {Value: "Problem: it's $HOME; `x`"}, {Value: ""}}}
	if err := s.Send(context.Background(), &catalog.MediaType{ExecPath: "notify.sh"}, a); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	if string(b) != "ops@example.com|Problem: it's $HOME; `x`||" {
		t.Fatalf("arguments: %q", b)
	}
	if err := s.Send(context.Background(), &catalog.MediaType{ExecPath: "fail.sh"}, a); err == nil || err.Error() != "fail.sh failed: cannot reach pager" {
		t.Fatalf("failing script: %v", err)
	}
	if err := s.Send(context.Background(), &catalog.MediaType{ExecPath: "../notify.sh"}, a); err == nil {
		t.Fatal("a path outside the scripts directory was run")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := s.Send(ctx, &catalog.MediaType{ExecPath: "slow.sh"}, a); err == nil || err.Error() != "Timeout while executing slow.sh." {
		t.Fatalf("slow script: %v", err)
	}
	pb, _ := os.ReadFile(filepath.Join(dir, "child"))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(pb)))
	waitFor(t, "the script's child killed with its group", func() bool {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		return err != nil || strings.Contains(string(st), ") Z ")
	})
}

func TestIntegrationEmail(t *testing.T) {
	if testing.Short() {
		t.Skip("starts aiosmtpd")
	}
	certs := testutil.MakeCerts(t)
	smtpd := testutil.StartSMTPD(t, testutil.SMTPDOptions{CertFile: certs.Server.Cert, KeyFile: certs.Server.Key, User: "zbx", Password: "s3cret"})
	s := &EmailSender{Now: func() time.Time { return time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC) }}
	mt := &catalog.MediaType{Type: catalog.MediaEmail, SMTPServer: "127.0.0.1", SMTPPort: smtpd.Port, SMTPHelo: "peregrine.test",
		SMTPEmail: "Peregrine <peregrine@example.com>", SMTPSecurity: catalog.SMTPStartTLS, SMTPAuth: 1, Username: "zbx", Passwd: "s3cret"}
	a := &Alert{SendTo: "ops@example.com,oncall@example.com", Subject: "Problem: Température élevée", Message: "Hôte web1: 95 °C\nSeverity: High"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Send(ctx, mt, a); err != nil {
		t.Fatal(err)
	}
	msgs := smtpd.Messages(t)
	if len(msgs) != 1 {
		t.Fatalf("%d messages", len(msgs))
	}
	m := msgs[0]
	hdr := func(name string) string {
		for _, l := range strings.Split(m, "\r\n") {
			if v, ok := strings.CutPrefix(l, name+": "); ok {
				return v
			}
		}
		return ""
	}
	subj, _ := new(mime.WordDecoder).DecodeHeader(hdr("Subject"))
	body := m[strings.Index(m, "\r\n\r\n")+4:]
	dec, _ := base64.StdEncoding.DecodeString(strings.ReplaceAll(body, "\r\n", ""))
	switch {
	case hdr("X-Envelope-From") != "peregrine@example.com", hdr("X-Envelope-To") != "ops@example.com,oncall@example.com":
		t.Fatalf("envelope: %q", m)
	case hdr("X-Auth") != "yes", hdr("X-TLS") != "yes":
		t.Fatalf("not authenticated over STARTTLS: %q", m)
	case subj != a.Subject, string(dec) != a.Message:
		t.Fatalf("subject %q body %q", subj, dec)
	case hdr("Date") != "Mon, 23 Nov 2026 12:00:00 +0000", !strings.HasSuffix(hdr("Message-ID"), "@example.com>"):
		t.Fatalf("Date/Message-ID: %q", m)
	}

	// A refused recipient, a wrong password, no STARTTLS where asked.
	a.SendTo = "refuse@example.com"
	if err := s.Send(ctx, mt, a); err == nil || !strings.Contains(err.Error(), "refused recipient refuse@example.com: 550") {
		t.Fatalf("refused recipient: %v", err)
	}
	a.SendTo = "ops@example.com"
	bad := *mt
	bad.Passwd = "wrong"
	if err := s.Send(ctx, &bad, a); err == nil || !strings.Contains(err.Error(), `refused the login of "zbx"`) {
		t.Fatalf("wrong password: %v", err)
	}
	plain := testutil.StartSMTPD(t, testutil.SMTPDOptions{})
	noTLS := *mt
	noTLS.SMTPPort, noTLS.SMTPAuth = plain.Port, 0
	if err := s.Send(ctx, &noTLS, a); err == nil || !strings.Contains(err.Error(), "does not offer STARTTLS") {
		t.Fatalf("STARTTLS missing: %v", err)
	}
	noTLS.SMTPSecurity = catalog.SMTPNone
	if err := s.Send(ctx, &noTLS, a); err != nil {
		t.Fatalf("plain SMTP: %v", err)
	}
	if n := len(plain.Messages(t)); n != 1 {
		t.Fatalf("plain server got %d messages", n)
	}

	// SSL/TLS from the first byte, with the server's certificate checked
	// against the test CA (smtp_verify_peer 1).
	smtps := testutil.StartSMTPD(t, testutil.SMTPDOptions{CertFile: certs.Server.Cert, KeyFile: certs.Server.Key, SMTPS: true, User: "zbx", Password: "s3cret"})
	pool := x509.NewCertPool()
	ca, err := os.ReadFile(certs.CAFile)
	if err != nil || !pool.AppendCertsFromPEM(ca) {
		t.Fatalf("test CA: %v", err)
	}
	ssl := *mt
	ssl.SMTPPort, ssl.SMTPSecurity, ssl.SMTPVerifyPeer = smtps.Port, catalog.SMTPSSL, 1
	verified := &EmailSender{TLSConfig: &tls.Config{RootCAs: pool}}
	if err := verified.Send(ctx, &ssl, a); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("SSL with a certificate not for 127.0.0.1: %v", err) // the test certificate names peregrine-server only
	}
	ssl.SMTPVerifyPeer = 0
	if err := verified.Send(ctx, &ssl, a); err != nil {
		t.Fatalf("SSL/TLS: %v", err)
	}
	if m := smtps.Messages(t); len(m) != 1 || !strings.Contains(m[0], "X-TLS: yes") || !strings.Contains(m[0], "X-Auth: yes") {
		t.Fatalf("SMTPS server got %q", m)
	}
}

func TestLoginAuth(t *testing.T) {
	a := &loginAuth{user: "u", pass: "p"}
	if m, _, _ := a.Start(nil); m != "LOGIN" {
		t.Fatal(m)
	}
	for prompt, want := range map[string]string{"Username:": "u", "Password:": "p"} {
		if got, err := a.Next([]byte(prompt), true); err != nil || string(got) != want {
			t.Fatalf("%s → %q, %v", prompt, got, err)
		}
	}
	if _, err := a.Next([]byte("Other:"), true); err == nil {
		t.Fatal("unknown prompt accepted")
	}
}

// TestHangingWebhookFailsOthersDelivered: through the engine and the
// real webhook sender, a user whose endpoint hangs gets an alert failed
// with the timeout after its attempts, a user whose endpoint answers 500
// one failed with the status, and a user with a working endpoint is
// delivered meanwhile, not after them.
func TestHangingWebhookFailsOthersDelivered(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var hangTriedWhenOK []int // the hanging alert's finished attempts when /ok was called
	var eng *Engine
	mux := http.NewServeMux()
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) })
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		for _, a := range eng.Alerts(func(a *Alert) bool { return a.SendTo == "/hang" }) {
			hangTriedWhenOK = append(hangTriedWhenOK, a.Retries)
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer close(release)
	act := catalog.Action{Name: "a", Operations: []catalog.Operation{{StepFrom: 1, StepTo: 1, DefaultMsg: 1, UserIDs: []uint64{1, 2, 3}}}}
	cfg := testConfig(act)
	mt := cfg.MediaTypes[1]
	mt.Parameters, mt.Timeout, mt.MaxAttempts, mt.AttemptInterval, mt.MaxSessions = []catalog.MediaParam{{Name: "URL", Value: srv.URL + "{ALERT.SENDTO}"}}, "1s", 2, "0s", 3
	cfg.Medias[1][0].SendTo = []string{"/hang"}
	cfg.Medias[2][0].SendTo = []string{"/500"}
	cfg.Medias[3] = []catalog.UserMedia{{ID: 3, MediaTypeID: 1, SendTo: []string{"/ok"}, Severity: 63}}
	h := newHarness(t, cfg, "", func(o *Options) { o.Senders = map[int]Sender{catalog.MediaWebhook: &WebhookSender{}} })
	eng = h.e
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.e.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	h.e.Notify(h.ev.put(problem(1, 4, "p")))
	waitFor(t, "all three final", func() bool {
		return len(h.e.Alerts(func(a *Alert) bool { return a.Status == StatusSent || a.Status == StatusFailed })) == 3
	})
	for _, a := range h.e.Alerts(all) {
		switch a.SendTo {
		case "/hang":
			if a.Status != StatusFailed || a.Retries != 2 || !strings.Contains(a.Error, "context deadline exceeded") {
				t.Errorf("hanging endpoint: %+v", a)
			}
		case "/500":
			if a.Status != StatusFailed || a.Retries != 2 || !strings.Contains(a.Error, "500 Internal Server Error: boom") {
				t.Errorf("500 endpoint: %+v", a)
			}
		case "/ok":
			if a.Status != StatusSent || a.Retries != 1 {
				t.Errorf("working endpoint: %+v", a)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hangTriedWhenOK) != 1 || hangTriedWhenOK[0] != 0 {
		t.Fatalf("the working endpoint was called when the hanging alert had %v attempts done, want during its first", hangTriedWhenOK)
	}
}
