package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// HAUsage is the text of `peregrine bench ha -h`.
const HAUsage = `usage: peregrine bench ha [--scenarios LIST] [--quick] [scenario flags]

The cost of high availability (issue 31): runs scenarios against Peregrine
as a cluster node and against the embedded default, one after the other on
the same machine, and writes one side-by-side report.

  embedded  ` + "`peregrine serve`" + ` (this binary, or --bin) with the default
            configuration on a fresh data directory: catalog and state in
            SQLite and its own logs, history in the embedded engine
  ha        the same binary as the one node of a cluster (ha.node_name):
            state.store postgres, history.store clickhouse (values
            acknowledged once ClickHouse holds them), on a private
            PostgreSQL (Debian's postgresql-15, its defaults: fsync on) and
            a private clickhouse-server, both started by this command on
            127.0.0.1 and removed at the end; their CPU counts as the
            server's

Every scenario flag of ` + "`peregrine bench`" + ` applies to both runs (e.g.
--steps, --sizes, --storm-items). The report directory (--report) holds
embedded/ and ha/ (each a full report) and the side-by-side report.md:
write-scaling's written values and acknowledge latency (p50/p99, a frame's
send to its reply) per step, history-read's latency per size, storm's times.

--quick sets small sizes for a smoke run of seconds (flags given explicitly
keep their values): not figures; a quiet machine and the defaults are.

flags:
`

// haQuick are the --quick sizes.
var haQuick = map[string]string{
	"steps": "2,4", "items-per-target": "10", "warmup": "1s", "window": "2s", "drain-timeout": "20s",
	"warmup-time": "0", "sizes": "200", "reps": "2", "storm-items": "20", "storm-timeout": "1m",
	"storm-trigger-batch": "20", "conns": "2", "packet": "100", "quiet": "true",
}

// haModes are the two servers compared, in report order.
var haModes = []string{"embedded", "ha"}

func haMain(ctx context.Context, args []string, stdout, stderr io.Writer, version string) int {
	parse := func(out io.Writer) (*flag.FlagSet, *options, *haFlags, error) {
		fs, o := newFlags(out)
		h := &haFlags{}
		fs.StringVar(&h.scenarios, "scenarios", "write-scaling,history-read,storm", "scenarios run against both servers")
		fs.StringVar(&h.bin, "bin", "", "peregrine binary to serve (default: this one)")
		fs.BoolVar(&h.quick, "quick", false, "small sizes for a smoke run of seconds (explicit flags win)")
		fs.StringVar(&h.modes, "modes", strings.Join(haModes, ","), "servers to run: embedded, ha or both")
		fs.Usage = func() {
			fmt.Fprint(fs.Output(), HAUsage)
			fs.PrintDefaults()
		}
		if err := fs.Parse(args); err != nil {
			return nil, nil, nil, err
		}
		if fs.NArg() > 0 {
			return nil, nil, nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
		}
		if h.quick {
			set := map[string]bool{}
			fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
			for k, v := range haQuick {
				if !set[k] {
					fs.Set(k, v)
				}
			}
		}
		return fs, o, h, nil
	}
	_, o, h, err := parse(stderr)
	if err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		fmt.Fprintf(stderr, "peregrine bench ha: %v\n", err)
		return 2
	}
	if o.target != "" {
		fmt.Fprintln(stderr, "peregrine bench ha: --target is not used: the command starts both servers itself")
		return 2
	}
	if _, err := o.scenarios(h.scenarios); err != nil {
		fmt.Fprintf(stderr, "peregrine bench ha: %v\n", err)
		return 2
	}
	modes, err := h.modeList()
	if err != nil {
		fmt.Fprintf(stderr, "peregrine bench ha: %v\n", err)
		return 2
	}
	report := o.report
	if report == "" {
		report = filepath.Join("bench", "reports", "ha-"+time.Now().UTC().Format("20060102-150405"))
	}
	b := &haBench{report: report, bin: h.bin, modes: modes, stdout: stdout, stderr: stderr,
		command: "peregrine bench ha " + shellJoin(maskPassword(args)), version: version,
		newRun: func() (*options, []Scenario, error) {
			fs, o, h, err := parse(io.Discard)
			if err != nil {
				return nil, nil, err
			}
			scens, err := o.scenarios(h.scenarios)
			o.settings = measurementSettings(fs)
			return o, scens, err
		}}
	if err := b.run(ctx); err != nil {
		fmt.Fprintf(stderr, "peregrine bench ha: %v\n", err)
		return 1
	}
	return 0
}

type haFlags struct {
	scenarios, bin, modes string
	quick                 bool
}

func (h *haFlags) modeList() ([]string, error) {
	var out []string
	for _, m := range strings.Split(h.modes, ",") {
		switch m {
		case "embedded", "ha":
			out = append(out, m)
		default:
			return nil, fmt.Errorf("--modes: %q is neither embedded nor ha", m)
		}
	}
	return out, nil
}

// haBench is one `bench ha` run.
type haBench struct {
	report, bin, command, version string
	modes                         []string
	stdout, stderr                io.Writer
	// newRun parses the command line again: each server gets options and
	// scenarios of its own (scenarios keep state).
	newRun func() (*options, []Scenario, error)
}

func (b *haBench) run(ctx context.Context) error {
	if err := os.MkdirAll(b.report, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "peregrine-bench-ha-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	header := [][2]string{{"command", "`" + b.command + "`"}}
	var dirs []string
	var firstErr error
	for _, mode := range b.modes {
		dir, desc, err := b.runMode(ctx, mode, filepath.Join(work, mode))
		header = append(header, [2]string{mode, desc})
		if err != nil {
			err = fmt.Errorf("%s: %w", mode, err)
			if firstErr == nil {
				firstErr = err
			} else {
				fmt.Fprintf(b.stderr, "peregrine bench ha: %v\n", err)
			}
		}
		if dir != "" {
			dirs = append(dirs, dir)
		}
		if ctx.Err() != nil {
			break
		}
	}
	if len(dirs) == 2 {
		rep, err := Compare(dirs[0], dirs[1])
		if err != nil {
			return err
		}
		rep.Title = "peregrine bench ha: a cluster node (PostgreSQL + ClickHouse) against the embedded default"
		rep.Header = append(header, rep.Header...)
		if err := rep.Write(b.report); err != nil {
			return err
		}
		fmt.Fprintf(b.stdout, "report: %s\n", filepath.Join(b.report, "report.md"))
	}
	return firstErr
}

// runMode starts one server, runs the scenarios against it into
// report/mode and stops it. dir is "" when no report was written.
func (b *haBench) runMode(ctx context.Context, mode, work string) (dir, desc string, err error) {
	o, scens, err := b.newRun()
	if err != nil {
		return "", "", err
	}
	data := filepath.Join(work, "data")
	if err := os.MkdirAll(work, 0o700); err != nil {
		return "", "", err
	}
	trapperPort, err := freePort()
	if err != nil {
		return "", "", err
	}
	trapper := "127.0.0.1:" + strconv.Itoa(trapperPort)
	cfg := fmt.Sprintf("data_dir: %s\ntrapper:\n  listen: %s\nhttp:\n  listen: 127.0.0.1:0\n  ui: false\n", data, trapper)
	desc = "`peregrine serve`, the default configuration (SQLite, own logs, embedded history engine)"
	var engines *haEngines
	if mode == "ha" {
		fmt.Fprintln(b.stderr, "bench ha: starting PostgreSQL and ClickHouse on 127.0.0.1")
		engines, err = startHAEngines(filepath.Join(work, "engines"))
		if err != nil {
			return "", desc, err
		}
		defer engines.stop()
		cfg += fmt.Sprintf("state:\n  store: postgres\n  postgres:\n    dsn: %q\nhistory:\n  store: clickhouse\n  clickhouse:\n    urls: [%q]\n"+
			"ha:\n  node_name: bench-ha\n  node_address: %s\n", engines.DSN, engines.CHURL, trapper)
		desc = fmt.Sprintf("`peregrine serve` as the one node of a cluster: state.store postgres (%s), history.store clickhouse (%s, ack: inserted), all on 127.0.0.1; their CPU counted as the server's",
			engines.PGDesc, engines.CHDesc)
		for _, p := range engines.Ports {
			if o.cpuPorts != "" {
				o.cpuPorts += ","
			}
			o.cpuPorts += strconv.Itoa(p)
		}
	}
	fmt.Fprintf(b.stderr, "bench ha: starting %s peregrine serve\n", mode)
	srv, err := startServe(b.bin, work, data, cfg, 3*time.Minute)
	if err != nil {
		return "", desc, err
	}
	defer func() {
		srv.stop()
		if log, err := os.ReadFile(filepath.Join(work, "server.log")); err == nil {
			os.WriteFile(filepath.Join(b.report, mode+"-server.log"), log, 0o644)
		}
	}()
	o.target = "http://" + srv.http + "/api_jsonrpc.php"
	o.trapper, o.password, o.name = srv.trapper, srv.password, mode
	o.report = filepath.Join(b.report, mode)
	o.command, o.version = b.command, b.version
	err = o.run(ctx, scens, b.stdout, b.stderr)
	if _, serr := os.Stat(filepath.Join(o.report, "report.md")); serr == nil {
		dir = o.report
	}
	return dir, desc, err
}
