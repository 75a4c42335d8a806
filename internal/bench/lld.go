package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/lld"
	"github.com/peregrine-mon/peregrine/internal/trigger"
)

// LLDUsage is the text of `peregrine bench lld -h`.
const LLDUsage = `usage: peregrine bench lld --template FILE [flags]
       peregrine bench lld --template FILE --target URL [flags]

Measures templates and low-level discovery at fleet size, in this process:
a fresh catalog (SQLite in a temporary directory) imports the template file
(the official "Linux by Zabbix agent", template_os_linux.yaml, by default
from $ZABBIX_TEMPLATES_DIR), then per step (--steps, host counts):
  - link: that many hosts are created, each linked to the template, in
    one Edit per --batch hosts; the time to commit and build the
    snapshots ("catalog build"), the items and triggers copied;
  - LLD: every host's discovery rules get the replies a simulated agent
    gives (--fs file systems, --ifs network interfaces, --devs block
    devices) through the LLD engine, 1000 rules per Edit as the server
    applies them; the time, the items and triggers discovered; then the
    same replies again (nothing changes, nothing is written);
  - memory: the Go heap after a GC, per item of the catalog;
  - a small edit (one host renamed: commit and snapshot rebuild) and a
    reload (the catalog opened again: every table read, the snapshot
    built), Peregrine's counterparts of Zabbix's configuration sync.
The template is imported as shipped (its dashboards and graph
prototypes included: discovery makes graphs too).

With --target (a Zabbix 6.0 server's API), the same host count is created
there instead, through host.create in batches (hosts named --prefix-N in a
group of that name, linked to the template of --template-name, an agent
interface on 127.0.0.1:--agent-port, disabled unless --enabled), timed,
then the configuration syncer's own report ("synced configuration in S
sec", its process title, read from /proc: the server must run on this
machine) is sampled until it shows a sync after the hosts were created;
everything created is deleted at the end.

flags:
`

// LLDBench is the lld scenario.
type LLDBench struct {
	Template string // template file (YAML)
	// MemProfile, if set, is where each step writes a heap profile
	// (suffixed with the host count) when it measures the heap per item.
	MemProfile string
	Hosts      []int // steps, ascending
	Batch      int   // hosts per link Edit
	FS, Ifs    int   // discovered per host
	Devs       int
	Log        io.Writer
}

// LLDStep is one step's figures.
type LLDStep struct {
	Hosts                        int
	Link                         time.Duration
	ItemsLinked, TriggersLinked  int
	LLD, LLDAgain                time.Duration
	Rules                        int
	ItemsFound, TriggersFound    int
	Items, Triggers              int // the catalog's hosts' items and triggers after LLD
	HeapBytes                    uint64
	BytesPerItem                 float64
	LinkHostsPerSec, RulesPerSec float64
	// SmallEdit is one Edit renaming one host: commit and the snapshot
	// rebuilt over the whole catalog (Zabbix's configuration sync
	// counterpart for a small change).
	SmallEdit time.Duration
	// Reload is opening the catalog again: every table read and the
	// snapshot built (the counterpart of a full configuration sync).
	Reload time.Duration
}

func (b *LLDBench) defaults() error {
	if len(b.Hosts) == 0 {
		b.Hosts = []int{1000, 10000}
	}
	if !slices.IsSorted(b.Hosts) || b.Hosts[0] <= 0 {
		return errors.New("bench lld: --steps must be ascending positive host counts")
	}
	if b.Batch <= 0 {
		b.Batch = 1000
	}
	if b.Log == nil {
		b.Log = io.Discard
	}
	return nil
}

// lldTemplateSource reads the template file and checks it holds a
// template.
func lldTemplateSource(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	exp, _ := doc["zabbix_export"].(map[string]any)
	tms, _ := exp["templates"].([]any)
	if len(tms) == 0 {
		return nil, fmt.Errorf("%s: no templates", path)
	}
	return raw, nil
}

// lldReply is what a simulated Linux agent answers to a discovery key.
func (b *LLDBench) lldReply(key string) string {
	var rows []string
	switch {
	case strings.HasPrefix(key, "vfs.fs.discovery"):
		for i := range b.FS {
			name := "/"
			if i > 0 {
				name = "/data" + strconv.Itoa(i)
			}
			rows = append(rows, fmt.Sprintf(`{"{#FSNAME}":%q,"{#FSTYPE}":"ext4","{#FSLABEL}":"","{#FSDRIVETYPE}":"fixed"}`, name))
		}
	case strings.HasPrefix(key, "net.if.discovery"):
		for i := range b.Ifs {
			rows = append(rows, fmt.Sprintf(`{"{#IFNAME}":"eth%d"}`, i))
		}
	case strings.HasPrefix(key, "vfs.dev.discovery"):
		for i := range b.Devs {
			rows = append(rows, fmt.Sprintf(`{"{#DEVNAME}":"vd%c","{#DEVTYPE}":"disk"}`, 'a'+i%26))
		}
	}
	return "[" + strings.Join(rows, ",") + "]"
}

// Run measures every step, each on a fresh catalog.
func (b *LLDBench) Run(ctx context.Context) ([]LLDStep, error) {
	if err := b.defaults(); err != nil {
		return nil, err
	}
	src, err := lldTemplateSource(b.Template)
	if err != nil {
		return nil, err
	}
	var out []LLDStep
	for _, n := range b.Hosts {
		st, err := b.step(ctx, src, n)
		if err != nil {
			return out, fmt.Errorf("%d hosts: %w", n, err)
		}
		fmt.Fprintf(b.Log, "%d hosts: link %v (%d items, %d triggers), LLD %v for %d rules (%d items, %d triggers), again %v, %.0f B/item, small edit %v, reload %v\n",
			n, st.Link.Round(time.Millisecond), st.ItemsLinked, st.TriggersLinked, st.LLD.Round(time.Millisecond), st.Rules,
			st.ItemsFound, st.TriggersFound, st.LLDAgain.Round(time.Millisecond), st.BytesPerItem, st.SmallEdit.Round(time.Millisecond), st.Reload.Round(time.Millisecond))
		out = append(out, st)
	}
	return out, nil
}

// writeHeapProfile writes the live heap's profile (go tool pprof
// -sample_index=inuse_space) to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func heapNow() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func (b *LLDBench) step(ctx context.Context, src []byte, n int) (st LLDStep, err error) {
	st = LLDStep{Hosts: n}
	dir, err := os.MkdirTemp("", "peregrine-bench-lld-")
	if err != nil {
		return st, err
	}
	defer os.RemoveAll(dir)
	heap0 := heapNow()
	cat, err := catalog.Open(ctx, catalog.Options{Path: filepath.Join(dir, "catalog.db"), ExprRefs: trigger.ItemRefs})
	if err != nil {
		return st, err
	}
	defer func() {
		if err != nil {
			cat.Close()
		}
	}()
	spec, err := catalog.ParseExport("yaml", src)
	if err != nil {
		return st, err
	}
	if _, err := cat.Import(ctx, spec, catalog.AllCreateUpdate); err != nil {
		return st, fmt.Errorf("importing %s: %w", b.Template, err)
	}
	snap := cat.Snapshot()
	tmpls := snap.Templates()
	if len(tmpls) == 0 {
		return st, errors.New("the file holds no template")
	}
	tmplIDs := []uint64{tmpls[0].ID}
	var group uint64
	if _, err := cat.Edit(ctx, func(e *catalog.Edit) error {
		ids, err := e.CreateGroups([]string{"bench-lld"})
		group = ids[0]
		return err
	}); err != nil {
		return st, err
	}
	start := time.Now()
	for from := 0; from < n; from += b.Batch {
		to := min(from+b.Batch, n)
		if _, err := cat.Edit(ctx, func(e *catalog.Edit) error {
			hosts := make([]catalog.NewHost, 0, to-from)
			for i := from; i < to; i++ {
				hosts = append(hosts, catalog.NewHost{Host: fmt.Sprintf("bench-lld-%05d", i), GroupIDs: []uint64{group},
					Interfaces: []catalog.Interface{{Type: catalog.InterfaceAgent, Main: true, UseIP: true, IP: "127.0.0.1"}}})
			}
			ids, err := e.CreateHosts(hosts)
			if err != nil {
				return err
			}
			for _, id := range ids {
				if _, err := e.LinkTemplates(id, tmplIDs, "templates"); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return st, err
		}
	}
	st.Link = time.Since(start)
	st.LinkHostsPerSec = float64(n) / st.Link.Seconds()
	snap = cat.Snapshot()
	st.ItemsLinked, st.TriggersLinked = snap.ItemCount(), len(snap.Triggers())

	// Discovery: every rule's reply, applied as the server's engine does.
	eng := lld.New(lld.Options{Catalog: cat})
	var values []lld.Value
	for _, h := range snap.Hosts() {
		for _, it := range h.Items() {
			if it.Ext().LLD != nil {
				values = append(values, lld.Value{RuleID: it.ID, Value: b.lldReply(it.Key)})
			}
		}
	}
	st.Rules = len(values)
	apply := func() time.Duration {
		start := time.Now()
		for from := 0; from < len(values); from += 1000 {
			eng.Apply(ctx, values[from:min(from+1000, len(values))])
		}
		return time.Since(start)
	}
	st.LLD = apply()
	st.RulesPerSec = float64(st.Rules) / st.LLD.Seconds()
	snap = cat.Snapshot()
	st.Items, st.Triggers = snap.ItemCount(), len(snap.Triggers())
	st.ItemsFound, st.TriggersFound = st.Items-st.ItemsLinked, st.Triggers-st.TriggersLinked
	for _, v := range values[:min(len(values), 3)] {
		if msg := eng.RuleError(v.RuleID); msg != "" {
			fmt.Fprintf(b.Log, "rule %d: %s\n", v.RuleID, msg)
		}
	}
	st.LLDAgain = apply()
	st.HeapBytes = heapNow() - min(heap0, heapNow())
	if b.MemProfile != "" {
		if err := writeHeapProfile(fmt.Sprintf("%s.%d", b.MemProfile, n)); err != nil {
			return st, err
		}
	}
	st.BytesPerItem = float64(st.HeapBytes) / float64(max(st.Items, 1))
	h := snap.Hosts()[0]
	name := h.Host + "-renamed"
	start = time.Now()
	if _, err := cat.Edit(ctx, func(e *catalog.Edit) error {
		return e.UpdateHosts([]catalog.HostUpdate{{ID: h.ID, Host: &name}})
	}); err != nil {
		return st, err
	}
	st.SmallEdit = time.Since(start)
	if err := cat.Close(); err != nil {
		return st, err
	}
	start = time.Now()
	cat2, err := catalog.Open(ctx, catalog.Options{Path: filepath.Join(dir, "catalog.db"), ExprRefs: trigger.ItemRefs})
	if err != nil {
		return st, err
	}
	st.Reload = time.Since(start)
	if n := cat2.Snapshot().ItemCount(); n != st.Items {
		cat2.Close()
		return st, fmt.Errorf("reloaded %d items, had %d", n, st.Items)
	}
	return st, cat2.Close()
}

// LLDColumns is the CSV header of bench lld.
var LLDColumns = []string{"hosts", "link_s", "link_hosts_per_s", "items_linked", "triggers_linked", "rules", "lld_s", "rules_per_s",
	"items_discovered", "triggers_discovered", "lld_again_s", "items", "triggers", "heap_bytes", "bytes_per_item", "small_edit_s", "reload_s"}

func (s LLDStep) row() []string {
	f := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }
	return []string{strconv.Itoa(s.Hosts), f(s.Link), strconv.FormatFloat(s.LinkHostsPerSec, 'f', 0, 64),
		strconv.Itoa(s.ItemsLinked), strconv.Itoa(s.TriggersLinked), strconv.Itoa(s.Rules), f(s.LLD),
		strconv.FormatFloat(s.RulesPerSec, 'f', 0, 64), strconv.Itoa(s.ItemsFound), strconv.Itoa(s.TriggersFound),
		f(s.LLDAgain), strconv.Itoa(s.Items), strconv.Itoa(s.Triggers), strconv.FormatUint(s.HeapBytes, 10),
		strconv.FormatFloat(s.BytesPerItem, 'f', 0, 64), f(s.SmallEdit), f(s.Reload)}
}

func lldMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench lld", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), LLDUsage); fs.PrintDefaults() }
	defTmpl := ""
	if d := os.Getenv("ZABBIX_TEMPLATES_DIR"); d != "" {
		defTmpl = filepath.Join(d, "os/linux/template_os_linux.yaml")
	} else {
		defTmpl = "/usr/share/doc/zabbix-frontend-php/templates/os/linux/template_os_linux.yaml"
	}
	b := &LLDBench{Log: stdout}
	fs.StringVar(&b.Template, "template", defTmpl, "template file (Zabbix 6.0 YAML export)")
	steps := fs.String("steps", "1000,10000", "host counts, ascending")
	fs.IntVar(&b.Batch, "batch", 1000, "hosts created and linked per catalog Edit")
	fs.IntVar(&b.FS, "fs", 4, "file systems each simulated agent discovers")
	fs.IntVar(&b.Ifs, "ifs", 4, "network interfaces each simulated agent discovers")
	fs.IntVar(&b.Devs, "devs", 2, "block devices each simulated agent discovers")
	report := fs.String("report", "", "directory for lld.csv (optional)")
	profile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file")
	fs.StringVar(&b.MemProfile, "memprofile", "", "write each step's heap profile, where the heap per item is measured, to this file suffixed .HOSTS")
	var zt LLDZabbix
	fs.StringVar(&zt.URL, "target", "", "a Zabbix 6.0 API URL: measure its configuration cache sync instead")
	fs.StringVar(&zt.User, "user", "Admin", "API user (--target)")
	fs.StringVar(&zt.Password, "password", "zabbix", "API password (--target)")
	fs.StringVar(&zt.TemplateName, "template-name", "Linux by Zabbix agent", "the template to link (--target)")
	fs.StringVar(&zt.Prefix, "prefix", "s5e2e", "name prefix of the hosts and group created (--target)")
	fs.IntVar(&zt.AgentPort, "agent-port", 10050, "the hosts' agent interface port on 127.0.0.1 (--target)")
	fs.BoolVar(&zt.Enabled, "enabled", false, "create the hosts monitored (--target)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	for _, s := range strings.Split(*steps, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			fmt.Fprintf(stderr, "bench lld: --steps: %v\n", err)
			return 2
		}
		b.Hosts = append(b.Hosts, n)
	}
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			fmt.Fprintf(stderr, "bench lld: %v\n", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "bench lld: %v\n", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	var rows [][]string
	if zt.URL != "" {
		zt.Hosts, zt.Log = b.Hosts, stdout
		res, err := zt.Run(ctx)
		if zt.CleanupErr != nil {
			fmt.Fprintf(stderr, "bench lld: cleaning up (the hosts named %s-* are left on the peer): %v\n", zt.Prefix, zt.CleanupErr)
		}
		if err != nil {
			fmt.Fprintf(stderr, "bench lld: %v\n", err)
			return 1
		}
		rows = append(rows, LLDZabbixColumns)
		for _, r := range res {
			rows = append(rows, r.row())
		}
	} else {
		res, err := b.Run(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "bench lld: %v\n", err)
			return 1
		}
		rows = append(rows, LLDColumns)
		for _, r := range res {
			rows = append(rows, r.row())
		}
	}
	if *report != "" {
		if err := os.MkdirAll(*report, 0o755); err != nil {
			fmt.Fprintf(stderr, "bench lld: %v\n", err)
			return 1
		}
		var sb strings.Builder
		for _, r := range rows {
			sb.WriteString(strings.Join(r, ",") + "\n")
		}
		if err := os.WriteFile(filepath.Join(*report, "lld.csv"), []byte(sb.String()), 0o644); err != nil {
			fmt.Fprintf(stderr, "bench lld: %v\n", err)
			return 1
		}
	}
	for _, r := range rows {
		fmt.Fprintln(stdout, strings.Join(r, ","))
	}
	if zt.CleanupErr != nil {
		return 1 // the figures stand; what was created is not all gone
	}
	return 0
}
