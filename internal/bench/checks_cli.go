package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/bench/sim/sshsim"
)

// ChecksUsage is the text of `peregrine bench checks -h`.
const ChecksUsage = `usage: peregrine bench checks --kind snmp|external|ssh|jmx|odbc --target URL [flags]

Measures a server's own pollers through its API (Zabbix 6.0 or Peregrine:
the same calls), for the side-by-side runs of issue 14. It creates --hosts
hosts of --items-per-host items of one kind (host group "Peregrine bench
checks"), measures, and deletes them:

  snmp      SNMPv2c items (type 20, Counter64 OIDs, unsigned) on simulated
            devices in a child process, one per host on its own loopback
            address (the devices of bench snmp); the devices count the
            OIDs they answer, whichever server asks
  external  external checks (type 10) check_dummy["0","ok N"], run from
            the server's external scripts directory (Zabbix:
            ExternalScripts; Peregrine: its plugin directories)
  ssh       SSH checks (type 13) ssh.run[bench,127.0.0.1,PORT] running
            "echo N" with a password, against simulated SSH servers in
            this process (package sshsim, one per host, ed25519 host
            keys, curve25519 key exchange); a connection, handshake and
            login per check, as Zabbix makes them
  jmx       JMX items (type 16) jmx["java.lang:type=Runtime",Uptime,N]
            (unsigned) through the server's Zabbix Java gateway, every
            host's JMX interface at --jmx-addr (a JVM with remote JMX);
            a host's items go to the gateway in requests of up to 32
  odbc      database monitor items (type 11) db.odbc.select[pbN,,CONN]
            with the query "select N", through unixODBC to the database
            --odbc-conn names (a connection string both servers can use,
            e.g. Driver=PostgreSQL Unicode;Server=127.0.0.1;Port=5432;
            Database=postgres) as --odbc-user

--mode sweep makes every item due at once (task.create "Execute now"),
--rounds times, and times until each has a value (history.get); --mode
rate polls the items every --delay and counts, after --warmup, the values
stored in --window against the ideal (items / delay), and for snmp the
OIDs the devices answered. The server's CPU is sampled from /proc: the
process trees listening on --server-port and --cpu-ports (for Zabbix its
ListenPort and its PostgreSQL), with the children they reaped; without
either, the tree on the --target URL's port (Peregrine's own process);
--db-cpu-ports names the
queried database's processes (odbc) and --gateway-port the Java
gateway's (jmx). Each is given per check, over each sweep or rate
window. --start/--stop run shell commands around the
run (e.g. bench/zabbix-private.sh start, which starts a private Zabbix
server with the StartPollers given in ZP_POLLERS). In rate mode,
--cpu-ports adds the processes listening on more TCP ports (the server's
database: Zabbix's PostgreSQL) to the server's CPU, and --gateway-port
reports the Java gateway's CPU (with descendants) per value stored.

flags:
`

// ChecksBench is the checks scenario.
type ChecksBench struct {
	Kind         string
	Mode         string
	Hosts        int
	ItemsPerHost int
	Rounds       int
	Delay        time.Duration
	Warmup       time.Duration
	Window       time.Duration
	Timeout      time.Duration
	Server       ZabbixInstance
	// ODBCConn, ODBCUser, ODBCPassword: the data source of odbc items.
	ODBCConn, ODBCUser, ODBCPassword string
	// DBPorts: ports whose listening process trees are the queried
	// database's (odbc), for its CPU per check.
	DBPorts []int
	// InProcessAgents runs the simulated SNMP devices in this process
	// (tests).
	InProcessAgents bool
	// ServerPort is the port the measured server's process listens on,
	// whose process tree's CPU rate mode samples; 0: the --target URL's
	// port.
	ServerPort int
	// CPUPorts are more TCP ports whose processes' CPU counts as the
	// server's (its database: Zabbix's PostgreSQL).
	CPUPorts []int
	// JMXAddr is the "ip:port" of a JVM's remote JMX (kind jmx): every
	// host's JMX interface.
	JMXAddr string
	// GatewayPort, if set, is the TCP port the Java gateway listens on:
	// its CPU over the rate window is reported per value stored.
	GatewayPort int
	Log         io.Writer
}

func (b *ChecksBench) defaults() error {
	switch b.Kind {
	case "snmp", "external", "ssh":
	case "jmx":
		if b.JMXAddr == "" {
			return errors.New("bench checks: --kind jmx needs --jmx-addr (a JVM's remote JMX ip:port)")
		}
	case "odbc":
		if b.ODBCConn == "" {
			return errors.New("bench checks: --kind odbc needs --odbc-conn, a connection string to a database both servers reach")
		}
	default:
		return fmt.Errorf("bench checks: --kind must be snmp, external, ssh, jmx or odbc, not %q", b.Kind)
	}
	switch b.Mode {
	case "":
		b.Mode = "sweep"
	case "sweep", "rate":
	default:
		return fmt.Errorf("bench checks: --mode must be sweep or rate, not %q", b.Mode)
	}
	if b.Server.Target == "" {
		return errors.New("bench checks: --target (the server's API URL) is required")
	}
	if b.Hosts <= 0 || b.Hosts > 60000 || b.ItemsPerHost <= 0 {
		return errors.New("bench checks: --hosts must be 1..60000 and --items-per-host positive")
	}
	if b.Rounds <= 0 {
		b.Rounds = 1
	}
	if b.Delay <= 0 || b.Delay%time.Second != 0 {
		return errors.New("bench checks: --delay must be whole seconds")
	}
	if b.Warmup <= 0 {
		b.Warmup = 2 * b.Delay
	}
	if b.Window <= 0 {
		b.Window = 3 * b.Delay
	}
	if b.Timeout <= 0 {
		b.Timeout = 5 * time.Minute
	}
	if b.Server.Name == "" {
		b.Server.Name = "zabbix"
	}
	if b.Log == nil {
		b.Log = io.Discard
	}
	return nil
}

// snmpValue is the value simulated device OID n (1-based) holds.
func snmpValue(n int) string { return strconv.FormatUint(uint64(n-1)<<20, 10) }

// ChecksColumns is the CSV header of rate rows.
var ChecksColumns = []string{"target", "kind", "items", "delay_s", "ideal_per_s", "done_per_s", "ratio", "device_oids_per_s", "device_requests_per_s",
	"cpu_per_check_ms", "checks_per_core_s", "db_cpu_ms_per_check", "gateway_cpu_us_per_value"}

// benchSSHUser and benchSSHPassword are the simulated SSH servers'
// login.
const (
	benchSSHUser     = "peregrine-bench"
	benchSSHPassword = "bench-password"
)

// serverCPU is the CPU sampler of the measured server: the process
// trees listening on --server-port and --cpu-ports, with their reaped
// children; when neither is given, the tree on the --target URL's port
// (Peregrine's own; Zabbix's is its PHP frontend, hence the flags).
// None when it is this process (an in-process server, whose figure
// would include the simulated targets).
func (b *ChecksBench) serverCPU() ServerCPU {
	ports := append([]int{b.ServerPort}, b.CPUPorts...)
	if b.ServerPort == 0 && len(b.CPUPorts) == 0 {
		if u, err := url.Parse(b.Server.Target); err == nil {
			p, _ := strconv.Atoi(u.Port())
			ports = []int{p}
		}
	}
	s := b.cpu(ports...)
	if slices.Contains(s.PIDs, os.Getpid()) {
		return ServerCPU{}
	}
	return s
}

// Run provisions, measures and cleans up.
func (b *ChecksBench) Run(ctx context.Context) (sec Section, err error) {
	sec = Section{Title: "checks: " + b.Kind + " checks through the API (" + b.Mode + ")"}
	if err := b.defaults(); err != nil {
		return sec, err
	}
	k := &Checks{Group: "Peregrine bench checks", Log: b.Log}
	delay := strconv.Itoa(int(b.Delay / time.Second))
	if b.Mode == "sweep" {
		delay = "1d"
	}
	var devices *agentsProc
	switch b.Kind {
	case "snmp":
		devices, err = startSNMPDevices(b.Hosts, b.ItemsPerHost, b.InProcessAgents)
		if err != nil {
			return sec, err
		}
		defer devices.stop()
		k.History = 3
		for h := 0; h < b.Hosts; h++ {
			ip, port := splitHostPort(devices.addrs[h])
			host := CheckHost{Name: fmt.Sprintf("pb-snmp-%05d", h), Iface: CheckIface{Type: 2, IP: ip, Port: port,
				Details: map[string]string{"version": "2", "community": "public", "bulk": "1"}}}
			for i := 1; i <= b.ItemsPerHost; i++ {
				host.Items = append(host.Items, CheckItem{Key: "bench.oid[" + strconv.Itoa(i) + "]", Type: 20, ValueType: 3,
					OID: "1.3.6.1.4.1.9999.1." + strconv.Itoa(i) + ".0", Delay: delay})
			}
			k.Hosts = append(k.Hosts, host)
		}
		k.Expect = func(item int, v string) string {
			if want := snmpValue(item%b.ItemsPerHost + 1); v != want {
				return fmt.Sprintf("item %d = %q, want %s", item, v, want)
			}
			return ""
		}
	case "jmx":
		k.History = 3
		ip, port := splitHostPort(b.JMXAddr)
		for h := 0; h < b.Hosts; h++ {
			host := CheckHost{Name: fmt.Sprintf("pb-jmx-%05d", h), Iface: CheckIface{Type: 4, IP: ip, Port: port}}
			for i := 0; i < b.ItemsPerHost; i++ {
				// A third parameter (Zabbix's "unique short description")
				// makes each key unique on one attribute.
				host.Items = append(host.Items, CheckItem{Key: `jmx["java.lang:type=Runtime",Uptime,` + strconv.Itoa(h*b.ItemsPerHost+i) + `]`, Type: 16, ValueType: 3, Delay: delay})
			}
			k.Hosts = append(k.Hosts, host)
		}
		k.Expect = func(item int, v string) string {
			if _, err := strconv.ParseUint(v, 10, 64); err != nil {
				return fmt.Sprintf("item %d = %q, want the JVM's uptime in ms", item, v)
			}
			return ""
		}
	case "external":
		k.History = 4
		for h := 0; h < b.Hosts; h++ {
			host := CheckHost{Name: fmt.Sprintf("pb-ext-%05d", h), Iface: CheckIface{Type: 1, IP: "127.0.0.1", Port: "10050"}}
			for i := 0; i < b.ItemsPerHost; i++ {
				host.Items = append(host.Items, CheckItem{Key: `check_dummy["0","ok ` + strconv.Itoa(h*b.ItemsPerHost+i) + `"]`, Type: 10, ValueType: 4, Delay: delay})
			}
			k.Hosts = append(k.Hosts, host)
		}
		k.Expect = func(item int, v string) string {
			if want := "OK: ok " + strconv.Itoa(item); v != want {
				return fmt.Sprintf("item %d = %q, want %q", item, v, want)
			}
			return ""
		}
	case "ssh":
		servers, err := sshsim.Start(b.Hosts, sshsim.Options{Passwords: map[string]string{benchSSHUser: benchSSHPassword}})
		if err != nil {
			return sec, err
		}
		defer servers.Close()
		k.History = 4
		for h := 0; h < b.Hosts; h++ {
			ip, port := splitHostPort(servers.Addr(h))
			host := CheckHost{Name: fmt.Sprintf("pb-ssh-%05d", h), Iface: CheckIface{Type: 1, IP: "127.0.0.1", Port: "10050"}}
			for i := 0; i < b.ItemsPerHost; i++ {
				host.Items = append(host.Items, CheckItem{Key: fmt.Sprintf("ssh.run[bench%d,%s,%s]", i, ip, port), Type: 13, ValueType: 4, Delay: delay,
					Params: "echo " + strconv.Itoa(h*b.ItemsPerHost+i), Username: benchSSHUser, Password: benchSSHPassword})
			}
			k.Hosts = append(k.Hosts, host)
		}
		k.Expect = func(item int, v string) string {
			if want := strconv.Itoa(item); v != want {
				return fmt.Sprintf("item %d = %q, want %q", item, v, want)
			}
			return ""
		}
	case "odbc":
		k.History = 3
		for h := 0; h < b.Hosts; h++ {
			host := CheckHost{Name: fmt.Sprintf("pb-odbc-%05d", h), Iface: CheckIface{Type: 1, IP: "127.0.0.1", Port: "10050"}}
			for i := 0; i < b.ItemsPerHost; i++ {
				n := strconv.Itoa(h*b.ItemsPerHost + i)
				host.Items = append(host.Items, CheckItem{Key: "db.odbc.select[pb" + n + ",," + b.ODBCConn + "]", Type: 11, ValueType: 3, Delay: delay,
					Params: "select " + n, Username: b.ODBCUser, Password: b.ODBCPassword})
			}
			k.Hosts = append(k.Hosts, host)
		}
		k.Expect = func(item int, v string) string {
			if want := strconv.Itoa(item); v != want {
				return fmt.Sprintf("item %d = %q, want %q", item, v, want)
			}
			return ""
		}
	}
	c, stop, err := b.Server.start(ctx, b.Log)
	if err != nil {
		return sec, err
	}
	defer func() {
		if serr := stop(); serr != nil && err == nil {
			err = serr
		}
	}()
	set, err := k.provision(ctx, c)
	if set != nil {
		defer func() {
			if cerr := k.cleanup(c, set); cerr != nil && err == nil {
				err = cerr
			}
		}()
	}
	if err != nil {
		return sec, err
	}
	items := len(set.itemIDs)
	srvCPU, dbCPU, gwCPU := b.serverCPU(), b.cpu(b.DBPorts...), b.cpu(b.GatewayPort)
	measured := len(srvCPU.PIDs)+len(dbCPU.PIDs) > 0
	if measured {
		fmt.Fprintf(b.Log, "checks %s: CPU of the server: %s; of the database: %s\n", b.Server.Name, srvCPU.Describe(), dbCPU.Describe())
	}
	fmt.Fprintf(b.Log, "checks %s: %d %s items created; waiting %s\n", b.Server.Name, items, b.Kind, b.Server.Settle)
	if err := sleepCtx(ctx, b.Server.Settle); err != nil {
		return sec, err
	}
	if b.Mode == "sweep" {
		table := Table{Header: sweepHeader}
		csv := &CSV{File: "checks.csv", Header: SweepColumns}
		for round := 1; round <= b.Rounds; round++ {
			var req0, oid0 uint64
			if devices != nil {
				if req0, oid0, err = devices.counts(); err != nil {
					return sec, err
				}
			}
			s0, d0 := srvCPU.Sample(), dbCPU.Sample()
			r, err := k.sweep(ctx, c, set, b.Timeout)
			if err != nil {
				return sec, err
			}
			r.ServerCPU, r.DBCPU, r.CPUMeasured = srvCPU.Sample()-s0, dbCPU.Sample()-d0, measured
			extra := ""
			if devices != nil {
				req1, oid1, err := devices.counts()
				if err != nil {
					return sec, err
				}
				r.DeviceOIDs, r.DeviceRequests = oid1-oid0, req1-req0
				extra = fmt.Sprintf(", devices answered %d OIDs in %d requests", oid1-oid0, req1-req0)
			}
			tr, cr := sweepRow(b.Server.Name, round, r)
			table.Rows, csv.Rows = append(table.Rows, tr), append(csv.Rows, cr)
			if measured {
				extra += fmt.Sprintf(", CPU per check: server %.3f ms, database %.3f ms", perCheckMS(r.ServerCPU, r.Items-r.Missing, true), perCheckMS(r.DBCPU, r.Items-r.Missing, true))
			}
			fmt.Fprintf(b.Log, "checks %s %s round %d: %d items, all after %.2f s (first %.2f s, p50 %.2f s, p99 %.2f s; task.create %.2f s), %d missing, %d wrong %s%s\n",
				b.Server.Name, b.Kind, round, r.Items, r.All.Seconds(), r.First.Seconds(), r.P50.Seconds(), r.P99.Seconds(), r.Requests.Seconds(), r.Missing, r.Wrong, r.Example, extra)
		}
		sec.Tables, sec.CSV = append(sec.Tables, table), csv
		sec.Text = append(sec.Text, fmt.Sprintf("%d hosts × %d %s items (delay 1d) on %s, all made due at once by task.create (\"Execute now\"), %d rounds. "+
			"\"All done after\": from the request to the last value's clock (history.get).", b.Hosts, b.ItemsPerHost, b.Kind, b.Server.Name, b.Rounds))
		return sec, nil
	}
	if err := sleepCtx(ctx, b.Warmup); err != nil {
		return sec, err
	}
	var req0, oid0 uint64
	if devices != nil {
		if req0, oid0, err = devices.counts(); err != nil {
			return sec, err
		}
	}
	from := time.Now().Truncate(time.Second).Add(time.Second)
	if err := sleepCtx(ctx, time.Until(from)); err != nil {
		return sec, err
	}
	s0, d0, g0 := srvCPU.Sample(), dbCPU.Sample(), gwCPU.Sample()
	if err := sleepCtx(ctx, time.Until(from.Add(b.Window))); err != nil {
		return sec, err
	}
	sCPU, dCPU, gCPU := srvCPU.Sample()-s0, dbCPU.Sample()-d0, gwCPU.Sample()-g0
	var oids, reqs float64
	if devices != nil {
		req1, oid1, err := devices.counts()
		if err != nil {
			return sec, err
		}
		el := time.Since(from).Seconds()
		oids, reqs = float64(oid1-oid0)/el, float64(req1-req0)/el
	}
	// Values of the window's last second may still be on their way.
	if err := sleepCtx(ctx, 5*time.Second); err != nil {
		return sec, err
	}
	done, err := k.rate(ctx, c, set, from, from.Add(b.Window))
	if err != nil {
		return sec, err
	}
	ideal := float64(items) / b.Delay.Seconds()
	// CPU per value stored, and what one core would do at that cost.
	stored := int(done * b.Window.Seconds())
	srvMS, dbMS := perCheckMS(sCPU, stored, len(srvCPU.PIDs) > 0), perCheckMS(dCPU, stored, len(dbCPU.PIDs) > 0)
	var perCore, gwUS float64
	if srvMS > 0 {
		perCore = 1000 / srvMS
	}
	gwCol := "-"
	if len(gwCPU.PIDs) > 0 && stored > 0 {
		gwUS = float64(gCPU.Microseconds()) / float64(stored)
		gwCol = fmt.Sprintf("%.0f µs", gwUS)
	}
	coreCol := "-"
	if perCore > 0 {
		coreCol = human(perCore)
	}
	table := Table{Header: []string{"target", "kind", "items", "delay", "ideal/s", "stored/s", "of ideal", "CPU/check", "checks/s per core", "DB CPU/check", "gateway CPU/value", "device OIDs/s", "device requests/s"}}
	table.Rows = append(table.Rows, []string{b.Server.Name, b.Kind, human(float64(items)), b.Delay.String(), human(ideal), human(done), pct(done / ideal),
		msOrDash(srvMS), coreCol, msOrDash(dbMS), gwCol, human(oids), human(reqs)})
	sec.CSV = &CSV{File: "checks.csv", Header: ChecksColumns, Rows: [][]string{{b.Server.Name, b.Kind, fi(int64(items)), fi(int64(b.Delay / time.Second)), f(ideal), f(done), f(done / ideal), f(oids), f(reqs),
		f(srvMS), f(perCore), f(dbMS), f(gwUS)}}}
	sec.Tables = append(sec.Tables, table)
	if len(srvCPU.PIDs) > 0 {
		sec.Text = append(sec.Text, fmt.Sprintf("CPU: %s over the window, sampled from /proc for %s (the server's process tree).", sCPU.Round(time.Millisecond), srvCPU.Describe()))
	}
	if len(dbCPU.PIDs) > 0 {
		sec.Text = append(sec.Text, fmt.Sprintf("Database CPU: %s over the window, sampled for %s.", dCPU.Round(time.Millisecond), dbCPU.Describe()))
	}
	if len(gwCPU.PIDs) > 0 {
		sec.Text = append(sec.Text, fmt.Sprintf("Java gateway CPU: %s over the window, sampled for %s.", gCPU.Round(time.Millisecond), gwCPU.Describe()))
	}
	sec.Text = append(sec.Text, fmt.Sprintf("%d hosts × %d %s items every %s on %s; after %s of warm-up, the values stored with a clock in a %s window (history.get countOutput) "+
		"and the OIDs the devices answered in it.", b.Hosts, b.ItemsPerHost, b.Kind, b.Delay, b.Server.Name, b.Warmup, b.Window))
	fmt.Fprintf(b.Log, "checks %s %s rate: %d items every %s: %.0f stored/s of %.0f ideal (%.1f %%), devices %.0f OIDs/s in %.0f requests/s, CPU per value: server %.3f ms, database %.3f ms, gateway %.0f µs\n",
		b.Server.Name, b.Kind, items, b.Delay, done, ideal, 100*done/ideal, oids, reqs, srvMS, dbMS, gwUS)
	return sec, nil
}

// cpu is the process trees listening on ports (none for 0), with the
// children they reaped (a database's backend per connection).
func (b *ChecksBench) cpu(ports ...int) ServerCPU {
	s := ServerCPU{Reaped: true}
	for _, p := range ports {
		if p != 0 {
			s.PIDs = append(s.PIDs, ListeningPIDs(p)...)
		}
	}
	return s
}

// splitHostPort splits "ip:port" (IPv4 loopback addresses here).
func splitHostPort(a string) (string, string) {
	for i := len(a) - 1; i >= 0; i-- {
		if a[i] == ':' {
			return a[:i], a[i+1:]
		}
	}
	return a, ""
}

// sleepCtx sleeps d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// checksMain runs `peregrine bench checks`.
func checksMain(ctx context.Context, args []string, stdout, stderr io.Writer, version string) int {
	fs := flag.NewFlagSet("bench checks", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), ChecksUsage); fs.PrintDefaults() }
	var b ChecksBench
	fs.StringVar(&b.Kind, "kind", "", "snmp, external, ssh, jmx or odbc")
	fs.IntVar(&b.ServerPort, "server-port", 0, "port of the server's own process, whose CPU is sampled (default: the --target URL's port)")
	fs.StringVar(&b.JMXAddr, "jmx-addr", "", "jmx: a JVM's remote JMX ip:port, every host's JMX interface")
	fs.IntVar(&b.GatewayPort, "gateway-port", 0, "rate: the TCP port the Java gateway listens on, to sample its CPU (0: not measured)")
	fs.StringVar(&b.ODBCConn, "odbc-conn", "", "odbc: the connection string of the items' data source")
	fs.StringVar(&b.ODBCUser, "odbc-user", "", "odbc: the items' username")
	fs.StringVar(&b.ODBCPassword, "odbc-password", "", "odbc: the items' password")
	cpuPorts := fs.String("cpu-ports", "", "ports (comma-separated) of more of the server's processes (its database), for CPU per check")
	dbPorts := fs.String("db-cpu-ports", "", "ports (comma-separated) of the queried database's processes (odbc), for its CPU per check")
	fs.StringVar(&b.Mode, "mode", "sweep", "sweep (all due at once) or rate (every --delay)")
	fs.IntVar(&b.Hosts, "hosts", 100, "hosts (snmp: simulated devices)")
	fs.IntVar(&b.ItemsPerHost, "items-per-host", 64, "items per host")
	fs.IntVar(&b.Rounds, "rounds", 2, "sweeps")
	fs.DurationVar(&b.Delay, "delay", 10*time.Second, "rate: every item's update interval (whole seconds)")
	fs.DurationVar(&b.Warmup, "warmup", 0, "rate: wait before the window (default 2 delays)")
	fs.DurationVar(&b.Window, "window", 0, "rate: measured window (default 3 delays)")
	fs.DurationVar(&b.Timeout, "timeout", 5*time.Minute, "sweep: bound of one sweep")
	serverFlags(fs, &b.Server, "", "the server under test (required)")
	report := fs.String("report", "", "report directory (default bench/reports/checks-TIME)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	var err error
	if b.CPUPorts, err = parsePorts(*cpuPorts); err == nil {
		b.DBPorts, err = parsePorts(*dbPorts)
	}
	if err != nil {
		fmt.Fprintln(stderr, "bench checks:", err)
		return 2
	}
	return runLocalBench(stdout, stderr, "checks", args, version, "1", *report, func(_ []int, _ string) (Section, error) {
		b.Log = stderr
		return b.Run(ctx)
	})
}

// parsePorts reads a comma-separated list of ports ("" is none).
func parsePorts(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, p := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("%q is no port", p)
		}
		out = append(out, n)
	}
	return out, nil
}
