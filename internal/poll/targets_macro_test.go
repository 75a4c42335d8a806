package poll

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// TestTargetUserMacros checks that the host's user macros (its own, its
// templates', global) are resolved in item keys' parameters, intervals
// and timeouts, and that one left undefined makes the item say so.
func TestTargetUserMacros(t *testing.T) {
	cat, err := catalog.Open(context.Background(), catalog.Options{Path: filepath.Join(t.TempDir(), "c.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	spec, err := catalog.ParseSpec([]byte(`
macros:
  - {macro: '{$TIMEOUT}', value: 7s}
templates:
  - template: T
    macros:
      - {macro: '{$INTERVAL}', value: 30s}
      - {macro: '{$PATH}', value: 'a,b'}
hosts:
  - host: h
    groups: [G]
    interfaces: [{ip: 127.0.0.1}]
    templates: [{name: T}]
    macros:
      - {macro: '{$PORT}', value: '8080'}
    items:
      - {key: 'net.tcp.service[http,,{$PORT}]', type: simple, delay: '{$INTERVAL}', timeout: '{$TIMEOUT}'}
      - {key: 'vfs.file.exists[{$PATH}]', type: zabbix_agent}
      - {key: 'agent.ping', type: zabbix_agent, timeout: '{$UNDEFINED}'}
`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.Apply(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	snap := cat.Snapshot()
	h := snap.Host("h")
	tg := func(key string) target {
		return targetOf(snap, h, h.Item(key), false, 3*time.Second)
	}
	if g := tg("net.tcp.service[http,,{$PORT}]"); g.key != "net.tcp.service[http,,8080]" || g.delay != "30s" || g.timeout != 7*time.Second || g.bad != "" {
		t.Errorf("tcp target %+v", g)
	}
	// A value with a comma is quoted, so it stays one parameter.
	if g := tg("vfs.file.exists[{$PATH}]"); g.key != `vfs.file.exists["a,b"]` {
		t.Errorf("quoted parameter: key %q", g.key)
	}
	if g := tg("agent.ping"); !strings.Contains(g.bad, "{$UNDEFINED}") || !strings.Contains(g.bad, "not defined") {
		t.Errorf("undefined timeout macro: %+v", g)
	}
}
