package server

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestIntegrationJMX polls a real JVM through the real Zabbix Java
// gateway with a whole server: values and a discovery's JSON stored,
// the gateway's error as an item's not supported reason, the JMX
// interface available; a JVM that is gone makes its interface
// unreachable with the gateway's words, as the 6.0 server does; without
// a gateway configured, JMX items are not supported, saying so.
func TestIntegrationJMX(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs the Java gateway and a JVM")
	}
	app := testutil.StartJMXApp(t, testutil.JMXAppOptions{Beans: 2})
	gw := testutil.StartJavaGateway(t, testutil.JavaGatewayOptions{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, gonePort, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	items := []catalog.ItemSpec{
		{Key: `jmx["java.lang:type=Memory","HeapMemoryUsage.used"]`, Type: "jmx", ValueType: "unsigned", Delay: "1s"},
		{Key: `jmx["peregrine:type=Test,name=t1",Ratio]`, Type: "jmx", ValueType: "float", Delay: "1s"},
		{Key: `jmx.discovery[beans,"peregrine:type=Test,*"]`, Type: "jmx", ValueType: "text", Delay: "1s"},
		{Key: `jmx["peregrine:type=Test,name=t0",Nope]`, Type: "jmx", ValueType: "unsigned", Delay: "1s"},
	}
	spec := catalog.Spec{Hosts: []catalog.HostSpec{
		{Host: "jvm", Groups: []string{"Java"}, Interfaces: []catalog.InterfaceSpec{{Type: "jmx", IP: "127.0.0.1", Port: strconv.Itoa(app.Port)}}, Items: items},
		{Host: "gone", Groups: []string{"Java"}, Interfaces: []catalog.InterfaceSpec{{Type: "jmx", IP: "127.0.0.1", Port: gonePort}}, Items: items[:1]},
	}}
	_, gwPort, _ := net.SplitHostPort(gw.Addr)
	s := startServerTraps(t, spec, func(c *config.Config) {
		c.SNMP.TrapListen = ""
		c.JMX.Gateway = "127.0.0.1"
		c.JMX.GatewayPort, _ = strconv.Atoi(gwPort)
	})
	snap := s.Catalog.Snapshot()
	jvmIf := snap.Host("jvm").MainInterface(catalog.InterfaceJMX).ID
	goneIf := snap.Host("gone").MainInterface(catalog.InterfaceJMX).ID
	nope := snap.Lookup("jvm", items[3].Key).ID
	end := time.Now().Add(60 * time.Second)
	for {
		st, _ := s.ItemStates.ItemState(nope)
		a, _ := s.ItemStates.Availability(jvmIf)
		g, _ := s.ItemStates.Availability(goneIf)
		if len(s.readItem(t, "jvm", items[0].Key)) > 0 && len(s.readItem(t, "jvm", items[1].Key)) > 0 &&
			len(s.readItem(t, "jvm", items[2].Key)) > 0 && st.NotSupported && a.Available == 1 && g.Error != "" {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("after 60 s: values %d %d %d, %s %+v, interfaces %+v %+v", len(s.readItem(t, "jvm", items[0].Key)),
				len(s.readItem(t, "jvm", items[1].Key)), len(s.readItem(t, "jvm", items[2].Key)), items[3].Key, st, a, g)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if v := s.readItem(t, "jvm", items[0].Key)[0].U; v == 0 {
		t.Errorf("heap used 0")
	}
	if v := s.readItem(t, "jvm", items[1].Key)[0].F; v != 0.25 {
		t.Errorf("Ratio %v, want 0.25", v)
	}
	if v := s.readItem(t, "jvm", items[2].Key)[0].S; !strings.HasPrefix(v, `{"data":[{"{#JMXOBJ}":"peregrine:`) || strings.Count(v, "{#JMXOBJ}") != 2 {
		t.Errorf("discovery %s", v)
	}
	if st, _ := s.ItemStates.ItemState(nope); st.Error != "Attribute not found: No such attribute: Nope" {
		t.Errorf("the gateway's error as the item's: %+v", st)
	}
	if g, _ := s.ItemStates.Availability(goneIf); g.Error != "Connection refused: service:jmx:rmi:///jndi/rmi://127.0.0.1:"+gonePort+"/jmxrmi" {
		t.Errorf("the gone JVM's interface: %+v", g)
	}
}

// TestJMXWithoutGateway: with no jmx.gateway, a JMX item is not
// supported with a message naming the setting, never left silent.
func TestJMXWithoutGateway(t *testing.T) {
	s := startServerTraps(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "jvm", Groups: []string{"Java"},
		Interfaces: []catalog.InterfaceSpec{{Type: "jmx", IP: "127.0.0.1", Port: "1"}},
		Items:      []catalog.ItemSpec{{Key: `jmx["java.lang:type=Runtime",Uptime]`, Type: "jmx", ValueType: "unsigned", Delay: "1s"}},
	}}}, func(c *config.Config) { c.SNMP.TrapListen = "" })
	id := s.Catalog.Snapshot().Lookup("jvm", `jmx["java.lang:type=Runtime",Uptime]`).ID
	end := time.Now().Add(20 * time.Second)
	for {
		st, _ := s.ItemStates.ItemState(id)
		if st.NotSupported {
			if !strings.Contains(st.Error, "set jmx.gateway") {
				t.Fatalf("state %+v", st)
			}
			return
		}
		if time.Now().After(end) {
			t.Fatalf("after 20 s the item is %+v", st)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
