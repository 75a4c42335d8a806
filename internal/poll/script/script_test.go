package script

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/jsvm"
	"github.com/peregrine-mon/peregrine/internal/poll"
)

// TestCheck runs scripts that return, throw, loop, allocate without end,
// use their parameters and HttpRequest (against a server on loopback),
// all in one batch through the pool's workers, with Zabbix 6.0's results
// (recorded from 6.0.14 with the same scripts on the peer). The looping
// and allocating scripts cost their own workers: every other check of
// the batch reports its value.
func TestCheck(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Seen", r.Header.Get("X-Token"))
		_, _ = w.Write([]byte(r.Method + " " + r.URL.Path + " " + string(b)))
	}))
	defer srv.Close()
	p := func(name, value string) catalog.ItemParam { return catalog.ItemParam{Name: name, Value: value} }
	f := newFixture(t,
		catalog.ItemSpec{Key: "ok", ValueType: "unsigned", Params: "var p = JSON.parse(value); Zabbix.log(4, 'hi'); return parseInt(p.a) + 1;",
			Parameters: []catalog.ItemParam{p("a", "41"), p("m", "{$M}")}},
		catalog.ItemSpec{Key: "val", Params: "return value;", Parameters: []catalog.ItemParam{
			p("hh", "{HOST.HOST}"), p("hn", "{HOST.NAME}"), p("hc", "{HOST.CONN}"), p("hi", "{HOST.IP}"), p("hd", "{HOST.DNS}"),
			p("hp", "{HOST.PORT}"), p("ik", "{ITEM.KEY}"), p("iko", "{ITEM.KEY.ORIG}"), p("m", "x{$M}y{$NOPE}"), p("hid", "{HOST.ID}"), p("{$M}", "n")}},
		catalog.ItemSpec{Key: "none", Params: "return value;"},
		catalog.ItemSpec{Key: "throw", Params: `throw "boom here";`},
		catalog.ItemSpec{Key: "err", Params: `throw new Error("with error obj");`},
		catalog.ItemSpec{Key: "undef", Params: "return;"},
		catalog.ItemSpec{Key: "ws", Params: "  "},
		catalog.ItemSpec{Key: "null", Params: "return null;"},
		catalog.ItemSpec{Key: "obj", Params: "return {a:1};"},
		catalog.ItemSpec{Key: "bool", Params: "return true;"},
		catalog.ItemSpec{Key: "float", ValueType: "float", Params: "return 1.5;"},
		catalog.ItemSpec{Key: "big", ValueType: "unsigned", Params: "return 12345678901234567890;"},
		catalog.ItemSpec{Key: "syntax", Params: "return (;"},
		catalog.ItemSpec{Key: "loop", Params: "while (true) {}"},
		catalog.ItemSpec{Key: "alloc", Params: "var a = []; while (true) { a.push('x'.repeat(1000) + a.length); }"},
		catalog.ItemSpec{Key: "huge", Params: "return 'x'.repeat(1 << 20);"},
		catalog.ItemSpec{Key: "http", Params: `var p = JSON.parse(value); var r = new HttpRequest(); r.addHeader('X-Token: ' + p.token);
var b = r.post(p.url + '/in', 'body'); return r.getStatus() + ' ' + r.getHeaders()['x-seen'] + ' ' + b;`,
			Parameters: []catalog.ItemParam{p("url", srv.URL), p("token", "{$M}")}},
		catalog.ItemSpec{Key: "refused", Params: `return new HttpRequest().get('http://127.0.0.1:1/x');`},
	)
	c := New(Options{Item: f.item, JS: newPool(t, 4), Fetch: (&jsvm.HTTPFetcher{Client: srv.Client()}).Fetch, MaxValueSize: 64 << 10})
	defer c.Close()
	keys := []string{"ok", "val", "none", "throw", "err", "undef", "ws", "null", "obj", "bool", "float", "big", "syntax", "loop", "alloc", "huge", "http", "refused"}
	var batch []poll.Check
	for _, k := range keys {
		timeout := 3 * time.Second
		if k == "alloc" {
			timeout = time.Minute // the memory limit, not the time limit, stops it
		}
		batch = append(batch, f.check(t, k, timeout))
	}
	r := run(t, c, batch, 2*time.Minute)
	want := map[string]struct {
		st       poll.Status
		v, err   string
		contains bool
	}{
		"ok":      {st: poll.OK, v: "42"},
		"val":     {st: poll.OK, v: `{"hh":"web","hn":"Web server","hc":"127.0.0.9","hi":"127.0.0.9","hd":"web.example","hp":"{HOST.PORT}","ik":"val","iko":"val","m":"xmacrovaly{$NOPE}","hid":"{HOST.ID}","macroval":"n"}`},
		"none":    {st: poll.OK, v: "{}"},
		"throw":   {st: poll.NotSupported, err: "Cannot execute script: boom here"},
		"err":     {st: poll.NotSupported, err: "Cannot execute script: Error: with error obj"},
		"undef":   {st: poll.NotSupported, err: "Cannot execute script: undefined return value"},
		"ws":      {st: poll.NotSupported, err: "Cannot execute script: undefined return value"},
		"null":    {st: poll.OK, v: ""},
		"obj":     {st: poll.OK, v: "[object Object]"},
		"bool":    {st: poll.OK, v: "true"},
		"float":   {st: poll.OK, v: "1.5"},
		"big":     {st: poll.OK, v: "12345678901234567000"},
		"syntax":  {st: poll.NotSupported, err: "Cannot compile script: SyntaxError", contains: true},
		"loop":    {st: poll.NotSupported, err: "Cannot execute script: RangeError: execution timeout"},
		"alloc":   {st: poll.NotSupported, err: "Cannot execute script: memory limit exceeded (64 MiB)"},
		"huge":    {st: poll.NotSupported, err: "Cannot execute script: the returned value is 1048576 bytes, more than the limit of 65536"},
		"http":    {st: poll.OK, v: "200 macroval POST /in body"},
		"refused": {st: poll.NotSupported, err: "Cannot execute script: GoError: cannot send request", contains: true},
	}
	for i, k := range keys {
		got, w := r.of(batch[i].ItemID), want[k]
		switch {
		case got == nil:
			t.Errorf("%s: no result", k)
		case got.Status != w.st || string(got.Value) != w.v:
			t.Errorf("%s: %s %q %q, want %s %q", k, got.Status, got.Value, got.Error, w.st, w.v)
		case w.contains && !strings.HasPrefix(got.Error, w.err), !w.contains && got.Error != w.err:
			t.Errorf("%s: error %q, want %q", k, got.Error, w.err)
		case got.Clock.IsZero():
			t.Errorf("%s: no clock", k)
		}
	}
}

// TestItemGone: a check of an item deleted or made another type since
// it was scheduled is not supported, saying why.
func TestItemGone(t *testing.T) {
	f := newFixture(t, catalog.ItemSpec{Key: "t", Type: "trapper", ValueType: "text"})
	c := New(Options{Item: f.item})
	defer c.Close()
	ch := f.check(t, "t", time.Second)
	gone := ch
	gone.ItemID = 999
	r := run(t, c, []poll.Check{ch, gone}, 30*time.Second)
	for _, ch := range []poll.Check{ch, gone} {
		if got := r.of(ch.ItemID); got.Status != poll.NotSupported || got.Error != "the item is no script item any more" {
			t.Errorf("item %d: %s %q", ch.ItemID, got.Status, got.Error)
		}
	}
}

func TestValue(t *testing.T) {
	it := &catalog.Item{ID: 7, Key: "k[1]", Extra: &catalog.ItemExtra{Parameters: []catalog.ItemParam{{Name: "q\"uote", Value: "line\nbreak {ITEM.ID} {ITEM.KEY}"}}}}
	if got, want := Value(it), `{"q\"uote":"line\nbreak 7 k[1]"}`; got != want {
		t.Errorf("Value = %s, want %s", got, want)
	}
}
