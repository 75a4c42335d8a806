package historytest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
	"github.com/klauspost/compress/zstd"

	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// go test -run TestRecordCorpus -corpus.record 20m -timeout 30m ./internal/history/historytest/
//
// TestRecordCorpus re-records testdata/corpus.zst (see corpus.go): the
// real zabbix_agentd and zabbix_agent2 polled over their passive
// protocol and the real snmpd over SNMPv2c, every item once a second
// (text items every 30 s), each value stamped with the clock when its
// answer arrived, as a poller stamps it; the agentd's own debug log and
// /var/log/dpkg.log tailed once a second as log items, at most 20
// lines a second each (an agent's MaxLinesPerSecond). Without
// -corpus.record it does nothing.
var corpusRecord = flag.Duration("corpus.record", 0, "record testdata/corpus.zst for this long (TestRecordCorpus)")

// Agent keys of the Linux templates, by the class the corpus files
// them under. Counters are raw (the templates' "change per second" is
// applied when the corpus is replayed, see corpus.go).
var corpusAgentKeys = []struct{ class, key string }{
	{"float", "system.cpu.util[,user]"}, {"float", "system.cpu.util[,system]"}, {"float", "system.cpu.util[,idle]"},
	{"float", "system.cpu.util[,iowait]"}, {"float", "system.cpu.util[,steal]"}, {"float", "system.cpu.util[,softirq]"},
	{"float", "system.cpu.util[,nice]"}, {"float", "system.cpu.util[,interrupt]"},
	{"float", "system.cpu.load[all,avg1]"}, {"float", "system.cpu.load[all,avg5]"}, {"float", "system.cpu.load[all,avg15]"},
	{"float", "vm.memory.size[pavailable]"}, {"float", "vfs.fs.size[/,pused]"},
	{"float", "vfs.fs.inode[/,pfree]"}, {"float", "system.swap.size[,pfree]"},
	{"uint", "vm.memory.size[available]"}, {"uint", "vm.memory.size[used]"}, {"uint", "vm.memory.size[cached]"},
	{"uint", "vm.memory.size[buffers]"}, {"uint", "vm.memory.size[total]"}, {"uint", "vfs.fs.size[/,used]"},
	{"uint", "vfs.fs.size[/,free]"}, {"uint", "proc.num[]"}, {"uint", "proc.num[,,run]"}, {"uint", "system.uptime"},
	{"uint", "system.localtime"}, {"uint", "system.users.num"}, {"uint", "agent.ping"}, {"uint", "kernel.maxfiles"},
	{"uint", "kernel.maxproc"}, {"uint", "system.cpu.num"}, {"uint", "net.if.collisions[eth0]"},
	{"counter", "net.if.in[eth0]"}, {"counter", "net.if.out[eth0]"}, {"counter", "net.if.in[lo]"},
	{"counter", "net.if.out[lo]"}, {"counter", "net.if.in[eth0,packets]"}, {"counter", "net.if.out[eth0,packets]"},
	{"counter", "net.if.in[lo,packets]"}, {"counter", "net.if.in[eth0,errors]"}, {"counter", "net.if.in[eth0,dropped]"},
	{"counter", "system.cpu.switches"}, {"counter", "system.cpu.intr"}, {"counter", "vfs.dev.read[vda,sectors]"},
	{"counter", "vfs.dev.write[vda,sectors]"}, {"counter", "vfs.dev.read[vda,operations]"},
	{"counter", "vfs.dev.write[vda,operations]"},
	{"text", "system.uname"}, {"text", "system.hostname"}, {"text", "agent.version"}, {"text", "system.sw.arch"},
	{"text", "system.sw.os"}, {"text", "agent.hostname"}, {"text", "system.sw.packages"},
}

// SNMP objects polled by Get: scalars, and per-interface columns (the
// interface index is appended).
var corpusSNMPScalars = []struct{ class, name, oid string }{
	{"uint", "tcpCurrEstab", ".1.3.6.1.2.1.6.9.0"}, {"counter", "tcpInSegs", ".1.3.6.1.2.1.6.10.0"},
	{"counter", "tcpOutSegs", ".1.3.6.1.2.1.6.11.0"}, {"counter", "udpInDatagrams", ".1.3.6.1.2.1.7.1.0"},
	{"counter", "ipInReceives", ".1.3.6.1.2.1.4.3.0"}, {"uint", "sysUpTime", ".1.3.6.1.2.1.1.3.0"},
	{"uint", "memAvailReal", ".1.3.6.1.4.1.2021.4.6.0"}, {"uint", "memCached", ".1.3.6.1.4.1.2021.4.15.0"},
	{"counter", "ssCpuRawUser", ".1.3.6.1.4.1.2021.11.50.0"}, {"counter", "ssCpuRawSystem", ".1.3.6.1.4.1.2021.11.52.0"},
	{"counter", "ssCpuRawIdle", ".1.3.6.1.4.1.2021.11.53.0"}, {"float", "laLoad1", ".1.3.6.1.4.1.2021.10.1.3.1"},
	{"float", "laLoad5", ".1.3.6.1.4.1.2021.10.1.3.2"}, {"uint", "hrSystemProcesses", ".1.3.6.1.2.1.25.1.6.0"},
}

var corpusSNMPColumns = []struct{ class, name, oid string }{
	{"counter", "ifHCInOctets", ".1.3.6.1.2.1.31.1.1.1.6"}, {"counter", "ifHCOutOctets", ".1.3.6.1.2.1.31.1.1.1.10"},
	{"counter", "ifHCInUcastPkts", ".1.3.6.1.2.1.31.1.1.1.7"}, {"counter", "ifHCOutUcastPkts", ".1.3.6.1.2.1.31.1.1.1.11"},
	{"counter", "ifInOctets", ".1.3.6.1.2.1.2.2.1.10"}, {"counter", "ifOutOctets", ".1.3.6.1.2.1.2.2.1.16"},
	{"counter", "ifInDiscards", ".1.3.6.1.2.1.2.2.1.13"}, {"counter", "ifInErrors", ".1.3.6.1.2.1.2.2.1.14"},
	{"uint", "ifOperStatus", ".1.3.6.1.2.1.2.2.1.8"}, {"uint", "ifHighSpeed", ".1.3.6.1.2.1.31.1.1.1.15"},
	{"text", "ifDescr", ".1.3.6.1.2.1.2.2.1.2"}, {"text", "ifAlias", ".1.3.6.1.2.1.31.1.1.1.18"},
}

// recorder writes the raw corpus: item lines, then sample lines.
type recorder struct {
	mu    sync.Mutex
	items []string
	lines []string
}

func (r *recorder) item(source, class, key string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.items = append(r.items, fmt.Sprintf("I\t%d\t%s\t%s\t%s", len(r.items), source, class, key))
	return len(r.items) - 1
}

func (r *recorder) sample(idx int, at time.Time, v string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, fmt.Sprintf("%d\t%d\t%s", idx, at.UnixNano(), strconv.Quote(v)))
}

// agentGet asks a passive agent for one key (the Zabbix protocol: ZBXD,
// flag 1, 8-byte little-endian length, then the key).
func agentGet(addr, key string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	req := make([]byte, 13, 13+len(key))
	copy(req, "ZBXD\x01")
	binary.LittleEndian.PutUint64(req[5:], uint64(len(key)))
	if _, err := c.Write(append(req, key...)); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(c, 1<<20))
	if err != nil {
		return "", err
	}
	if len(b) < 13 || !bytes.HasPrefix(b, []byte("ZBXD")) {
		return "", fmt.Errorf("%s: bad answer %q", key, b)
	}
	v := string(b[13:])
	if strings.HasPrefix(v, "ZBX_NOTSUPPORTED") {
		return "", fmt.Errorf("%s: %q", key, v)
	}
	return v, nil
}

func TestRecordCorpus(t *testing.T) {
	if *corpusRecord <= 0 {
		t.Skip("records only with -corpus.record DURATION")
	}
	dir := t.TempDir()
	agentLog := filepath.Join(dir, "agentd.log")
	agents := map[string]string{
		"agentd": testutil.StartAgentd(t, "DebugLevel=4", "LogType=file", "LogFile="+agentLog, "LogFileSize=0"),
		"agent2": testutil.StartAgent2(t),
	}
	snmpd := testutil.StartSnmpd(t)
	rec := &recorder{}
	end := time.Now().Add(*corpusRecord)
	var wg sync.WaitGroup
	tick := func(every time.Duration, f func(time.Time)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := time.Now().Truncate(time.Second).Add(time.Second)
			for next.Before(end) {
				time.Sleep(time.Until(next))
				f(next)
				next = next.Add(every)
				for time.Until(next) < 0 {
					next = next.Add(every)
				}
			}
		}()
	}
	for _, src := range []string{"agentd", "agent2"} {
		addr := agents[src]
		var num, text []int
		var numKeys, textKeys []string
		for _, k := range corpusAgentKeys {
			if _, err := agentGet(addr, k.key); err != nil {
				t.Logf("%s: skipped: %v", src, err)
				continue
			}
			idx := rec.item(src, k.class, k.key)
			if k.class == "text" {
				text, textKeys = append(text, idx), append(textKeys, k.key)
			} else {
				num, numKeys = append(num, idx), append(numKeys, k.key)
			}
		}
		poll := func(idx []int, keys []string) func(time.Time) {
			return func(time.Time) {
				for i, k := range keys {
					if v, err := agentGet(addr, k); err == nil {
						rec.sample(idx[i], time.Now(), v)
					}
				}
			}
		}
		tick(time.Second, poll(num, numKeys))
		tick(30*time.Second, poll(text, textKeys))
	}
	recordSNMP(t, snmpd, rec, tick)
	recordLog(rec, "agentd", agentLog, tick)
	recordLog(rec, "dpkg", "/var/log/dpkg.log", tick)
	wg.Wait()
	out := filepath.Join("testdata", "corpus.zst")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	zw, _ := zstd.NewWriter(f, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	w := bufio.NewWriter(zw)
	fmt.Fprintf(w, "# recorded %s for %s by TestRecordCorpus\n", time.Now().UTC().Format(time.RFC3339), *corpusRecord)
	for _, l := range rec.items {
		w.WriteString(l + "\n")
	}
	for _, l := range rec.lines {
		w.WriteString(l + "\n")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d items, %d values into %s", len(rec.items), len(rec.lines), out)
}

func recordSNMP(t *testing.T, d *testutil.Snmpd, rec *recorder, tick func(time.Duration, func(time.Time))) {
	host, port, _ := net.SplitHostPort(d.Addr)
	p, _ := strconv.Atoi(port)
	g := &gosnmp.GoSNMP{Target: host, Port: uint16(p), Community: d.Community, Version: gosnmp.Version2c,
		Timeout: 3 * time.Second, Retries: 1, MaxOids: 60}
	if err := g.Connect(); err != nil {
		t.Fatal(err)
	}
	var ifs []int
	err := g.BulkWalk(".1.3.6.1.2.1.2.2.1.1", func(pdu gosnmp.SnmpPDU) error {
		ifs = append(ifs, int(gosnmp.ToBigInt(pdu.Value).Int64()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var num, text []string
	idx := map[string]int{}
	add := func(class, name, oid string) {
		if class == "text" {
			text = append(text, oid)
		} else {
			num = append(num, oid)
		}
		idx[oid] = rec.item("snmpd", class, name)
	}
	for _, s := range corpusSNMPScalars {
		add(s.class, s.name, s.oid)
	}
	for _, c := range corpusSNMPColumns {
		for _, i := range ifs {
			add(c.class, fmt.Sprintf("%s.%d", c.name, i), fmt.Sprintf("%s.%d", c.oid, i))
		}
	}
	var mu sync.Mutex // one gosnmp session, two tickers
	get := func(oids []string) func(time.Time) {
		return func(time.Time) {
			mu.Lock()
			defer mu.Unlock()
			for len(oids) > 0 {
				n := min(len(oids), 40)
				res, err := g.Get(oids[:n])
				oids = oids[n:]
				if err != nil {
					continue
				}
				at := time.Now()
				for _, v := range res.Variables {
					i, ok := idx[v.Name]
					if !ok {
						continue
					}
					switch v.Type {
					case gosnmp.OctetString:
						rec.sample(i, at, string(v.Value.([]byte)))
					case gosnmp.NoSuchObject, gosnmp.NoSuchInstance, gosnmp.Null:
					default:
						rec.sample(i, at, gosnmp.ToBigInt(v.Value).String())
					}
				}
			}
		}
	}
	tick(time.Second, get(num))
	tick(30*time.Second, get(text))
}

// recordLog tails a file once a second: every new whole line is a value
// of one log item, stamped when read.
func recordLog(rec *recorder, source, path string, tick func(time.Duration, func(time.Time))) {
	idx := rec.item(source, "log", "log["+path+"]")
	var off int64
	if source == "dpkg" {
		// A file written before the recording: its lines are replayed
		// 20 a second from its last 100 kB, in file order.
		b, err := os.ReadFile(path)
		if err != nil {
			return
		}
		if len(b) > 100000 {
			b = b[len(b)-100000:]
			b = b[bytes.IndexByte(b, '\n')+1:]
		}
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		tick(time.Second, func(time.Time) {
			for i := 0; i < 20 && len(lines) > 0; i++ {
				rec.sample(idx, time.Now(), lines[0])
				lines = lines[1:]
			}
		})
		return
	}
	var part []byte
	var queue []string
	tick(time.Second, func(time.Time) {
		f, err := os.Open(path)
		if err != nil {
			return
		}
		defer f.Close()
		if len(queue) > 1000 {
			return // far behind: read no more until the queue drains
		}
		f.Seek(off, io.SeekStart)
		b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
		off += int64(len(b))
		b = append(part, b...)
		cut := bytes.LastIndexByte(b, '\n')
		if cut < 0 {
			part = b
			return
		}
		part = append([]byte(nil), b[cut+1:]...)
		queue = append(queue, strings.Split(string(b[:cut]), "\n")...)
		// At most 20 lines a second, as an agent's log[] item
		// (MaxLinesPerSecond): the rest waits for the next second.
		for i := 0; i < 20 && len(queue) > 0; i++ {
			rec.sample(idx, time.Now(), queue[0])
			queue = queue[1:]
		}
	})
}
