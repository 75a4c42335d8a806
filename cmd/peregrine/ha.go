package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/peregrine-mon/peregrine/internal/ha"
)

const haUsage = `usage: peregrine ha [-config FILE] COMMAND
  status                      the cluster's nodes (zabbix_server -R ha_status)
  remove-node NAME|ID         remove a stopped or unavailable node (-R ha_remove_node=)
  set-failover-delay DELAY    10s to 15m, e.g. 30s or 5m (-R ha_set_failover_delay=)
  migrate                     move the stopped server's data directory (-data-dir, data_dir) into
                              PostgreSQL and ClickHouse, as the node ha.node_name; resumable
The commands act on the cluster's PostgreSQL (state.postgres.dsn of the configuration), from any machine;
migrate on the machine of the data directory.
`

// haCommand is `peregrine ha`: Zabbix 6.0's HA runtime commands, with
// 6.0.14's output lines (its binary's strings and ha_status recorded
// from the peer).
func haCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ha", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, haUsage) }
	cfg, ok := loadConfig(fs, args, false, stderr)
	if !ok {
		return 2
	}
	rest := fs.Args()
	want := map[string]int{"status": 1, "remove-node": 2, "set-failover-delay": 2, "migrate": 1}
	if len(rest) == 0 || want[rest[0]] != len(rest) {
		fmt.Fprint(stderr, haUsage)
		return 2
	}
	if cfg.State.Store != "postgres" {
		fmt.Fprintln(stderr, "peregrine ha: the configuration must name the cluster's PostgreSQL (state.store: postgres, state.postgres.dsn)")
		return 2
	}
	if rest[0] == "migrate" {
		return haMigrate(cfg, stdout, stderr)
	}
	var delay time.Duration
	if rest[0] == "set-failover-delay" {
		d, err := ha.ParseDelay(rest[1])
		if err != nil {
			fmt.Fprintf(stderr, "peregrine ha: %v\n", err)
			return 2
		}
		delay = d
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm, err := ha.OpenAdmin(ctx, cfg.State.Postgres.DSN)
	if err != nil {
		fmt.Fprintf(stderr, "peregrine ha: %v\n", err)
		return 1
	}
	defer adm.Close()
	switch rest[0] {
	case "status":
		var cl *ha.Cluster
		if cl, err = adm.Cluster(ctx); err == nil {
			err = ha.WriteStatus(stdout, cl)
		}
	case "remove-node":
		var n ha.NodeInfo
		if n, err = adm.RemoveNode(ctx, rest[1]); err == nil {
			fmt.Fprintf(stdout, "removed node %q with ID %q\n", n.Name, n.ID)
		}
	case "set-failover-delay":
		if err = adm.SetFailoverDelay(ctx, delay); err == nil {
			fmt.Fprintf(stdout, "HA failover delay set to %d seconds\n", int64(delay/time.Second))
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "peregrine ha: %v\n", err)
		return 1
	}
	return 0
}
