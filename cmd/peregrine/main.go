// Command peregrine is the Peregrine monitoring server.
//
//	peregrine serve [-config FILE] [overrides]
//	                                   run the server
//	peregrine import [-config FILE] [-data-dir DIR] SPEC.yaml
//	                                   load hosts, groups and items
//	peregrine bench SCENARIO --target URL [flags]
//	                                   measure a Zabbix-protocol server (see internal/bench)
//	peregrine migrate -source URL -target URL [flags]
//	                                   copy a Zabbix 6.0's configuration (see internal/migrate)
//	peregrine ha [-config FILE] status|remove-node NAME|set-failover-delay DELAY
//	                                   the HA cluster's runtime commands (see internal/ha)
//	peregrine version                  print the version
//
// main only parses flags and wires packages together; the server's
// assembly lives in internal/server.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/peregrine-mon/peregrine/internal/bench"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/migrate"
	"github.com/peregrine-mon/peregrine/internal/server"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: peregrine <command> [flags]

commands:
  serve   [-config FILE] [-data-dir DIR] [-trapper.listen ADDR] [-http.listen ADDR] [-log.level L]
                                    run the server (no file: embedded defaults; flags override the file)
  import  [-config FILE] [-data-dir DIR] SPEC.yaml
                                    create or update hosts, groups and items from SPEC.yaml
                                    (while the server is stopped: it owns the catalog when running)
  bench   SCENARIO --target URL ... measure Peregrine or a Zabbix server (peregrine bench -h)
  migrate -source URL -target URL   copy a running Zabbix 6.0's configuration and history into a
                                    running Peregrine through both APIs (peregrine migrate -h)
  ha      [-config FILE] status|remove-node NAME|set-failover-delay DELAY
                                    the HA cluster's nodes and runtime commands (zabbix_server -R ha_*)
  version                           print the version
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return serve(args[1:], stderr)
	case "import":
		return importSpec(args[1:], stdout, stderr)
	case "bench":
		return bench.Main(args[1:], stdout, stderr, server.Version)
	case "migrate":
		return migrate.Main(args[1:], stdout, stderr)
	case "ha":
		return haCommand(args[1:], stdout, stderr)
	case "version", "-version", "--version":
		fmt.Fprintf(stdout, "peregrine %s (Zabbix protocol 6.0)\n", server.Version)
		return 0
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "peregrine: unknown command %q\n%s", args[0], usage)
	return 2
}

// overrides are the settings that can also be given as flags. They are the
// ones an operator changes per run (where data lives, which ports, how
// verbose), so they need no YAML file; a flag wins over the file.
type overrides struct {
	dataDir, trapperListen, httpListen, logLevel *string
}

func loadConfig(fs *flag.FlagSet, args []string, serving bool, stderr io.Writer) (config.Config, bool) {
	path := fs.String("config", "", "YAML configuration file (default: built-in defaults)")
	o := overrides{dataDir: fs.String("data-dir", "", "data directory (overrides data_dir)")}
	if serving {
		o.trapperListen = fs.String("trapper.listen", "", "trapper address, e.g. :10051 (overrides trapper.listen)")
		o.httpListen = fs.String("http.listen", "", "HTTP address for the API and /metrics, e.g. :8080 (overrides http.listen)")
		o.logLevel = fs.String("log.level", "", "debug, info, warn or error (overrides log.level)")
	}
	if err := fs.Parse(args); err != nil {
		return config.Config{}, false
	}
	cfg, err := config.Load(*path)
	if err != nil {
		fmt.Fprintf(stderr, "peregrine: %v\n", err)
		return config.Config{}, false
	}
	set := func(dst *string, v *string) {
		if v != nil && *v != "" {
			*dst = *v
		}
	}
	set(&cfg.DataDir, o.dataDir)
	set(&cfg.Trapper.Listen, o.trapperListen)
	set(&cfg.HTTP.Listen, o.httpListen)
	set(&cfg.Log.Level, o.logLevel)
	// Validate again: a flag's value gets the same checks as the file's,
	// and the error names the setting the flag overrides.
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "peregrine: %v\n", err)
		return config.Config{}, false
	}
	return cfg, true
}

func serve(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg, ok := loadConfig(fs, args, true, stderr)
	if !ok {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "peregrine serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := server.NewLogger(cfg.Log, stderr)
	srv, err := server.New(ctx, cfg, log)
	if err != nil {
		log.Error("cannot start", "err", err)
		return 1
	}
	if err := srv.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		log.Error("server stopped with an error", "err", err)
		return 1
	}
	return 0
}

func importSpec(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg, ok := loadConfig(fs, args, false, stderr)
	if !ok {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprint(stderr, "usage: peregrine import [-config FILE] [-data-dir DIR] SPEC.yaml|EXPORT.xml|EXPORT.json\n")
		return 2
	}
	spec, err := loadImportFile(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "peregrine import: %v\n", err)
		return 1
	}
	if err := spec.Validate(); err != nil {
		fmt.Fprintf(stderr, "peregrine import: %s: %v\n", fs.Arg(0), err)
		return 1
	}
	ctx := context.Background()
	if err := server.PrepareDataDir(cfg.DataDir, server.NewLogger(cfg.Log, stderr)); err != nil {
		fmt.Fprintf(stderr, "peregrine import: %v\n", err)
		return 1
	}
	cat, err := catalog.Open(ctx, server.CatalogOptions(cfg.DataDir, nil))
	if err != nil {
		fmt.Fprintf(stderr, "peregrine import: %v\n", err)
		return 1
	}
	defer cat.Close()
	var res catalog.ApplyResult
	if spec.IsZabbixExport() {
		// A Zabbix export alone: configuration.import's code, one
		// transaction.
		res, err = cat.Import(ctx, spec, catalog.AllCreateUpdate)
	} else {
		res, err = cat.Apply(ctx, spec)
	}
	if err != nil {
		fmt.Fprintf(stderr, "peregrine import: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "groups created: %d; hosts created: %d, updated: %d; templates created: %d, updated: %d; items created: %d, updated: %d; triggers created: %d, updated: %d; graphs created: %d, updated: %d; dashboards created: %d, updated: %d; unchanged: %d\n",
		res.GroupsCreated, res.HostsCreated, res.HostsUpdated, res.TemplatesCreated, res.TemplatesUpdated, res.ItemsCreated, res.ItemsUpdated,
		res.TriggersCreated, res.TriggersUpdated, res.GraphsCreated, res.GraphsUpdated, res.DashboardsCreated, res.DashboardsUpdated, res.Unchanged)
	if res.NotPolled > 0 {
		fmt.Fprintf(stderr, "peregrine import: warning: %d agent items are on hosts without an agent interface and will not be polled; give those hosts `interfaces:` (docs/import-format.md)\n", res.NotPolled)
	}
	return 0
}

// loadImportFile reads an import document: a Zabbix export in XML or
// JSON by its extension, else YAML (the import format, which takes a
// Zabbix YAML export as its zabbix_export).
func loadImportFile(path string) (catalog.Spec, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".xml", ".json":
		b, err := os.ReadFile(path)
		if err != nil {
			return catalog.Spec{}, fmt.Errorf("cannot read import file: %w", err)
		}
		s, err := catalog.ParseExport(strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), "."), b)
		if err != nil {
			return catalog.Spec{}, fmt.Errorf("import file %s: %w", path, err)
		}
		return s, nil
	}
	return catalog.LoadSpecFile(path)
}
