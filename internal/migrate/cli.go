package migrate

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

const usage = `usage: peregrine migrate -source URL -target URL [flags]

Copies a running Zabbix 6.0's configuration (and optionally its recent
history) into a running Peregrine through both JSON-RPC APIs. Run it
again: what is already there is left unchanged (docs/migrate.md).

Passwords and tokens may also come from the environment:
MIGRATE_SOURCE_PASSWORD, MIGRATE_SOURCE_TOKEN, MIGRATE_TARGET_PASSWORD,
MIGRATE_TARGET_TOKEN (flags win).

flags:
`

// Main is `peregrine migrate`.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), usage); fs.PrintDefaults() }
	srcURL := fs.String("source", "", "the Zabbix 6.0 API, e.g. http://zabbix/api_jsonrpc.php")
	srcUser := fs.String("source-user", "Admin", "user on the source (a super admin sees everything)")
	srcPass := fs.String("source-password", "", "its password")
	srcToken := fs.String("source-token", "", "an API token instead of user and password")
	tgtURL := fs.String("target", "", "Peregrine's API, e.g. http://peregrine:8080/api_jsonrpc.php")
	tgtUser := fs.String("target-user", "Admin", "super admin on the target")
	tgtPass := fs.String("target-password", "", "its password (a new data directory's is in its admin-password file)")
	tgtToken := fs.String("target-token", "", "an API token instead of user and password")
	prefix := fs.String("prefix", "", "copy only objects whose name starts with this (and what they need)")
	days := fs.Int("history-days", 0, "also copy the last N days of history of the copied hosts' items")
	cpPath := fs.String("checkpoint", "peregrine-migrate.checkpoint", "history copy checkpoint file: a run with the same file resumes")
	timeout := fs.Duration("timeout", 5*time.Minute, "timeout of one API request")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	env := func(v *string, name string) {
		if *v == "" {
			*v = os.Getenv(name)
		}
	}
	env(srcPass, "MIGRATE_SOURCE_PASSWORD")
	env(srcToken, "MIGRATE_SOURCE_TOKEN")
	env(tgtPass, "MIGRATE_TARGET_PASSWORD")
	env(tgtToken, "MIGRATE_TARGET_TOKEN")
	switch {
	case *srcURL == "" || *tgtURL == "":
		fmt.Fprintln(stderr, "peregrine migrate: -source and -target are required")
		fs.Usage()
		return 2
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "peregrine migrate: unexpected argument %q\n", fs.Arg(0))
		return 2
	case *days < 0 || *days > 3650:
		fmt.Fprintln(stderr, "peregrine migrate: -history-days must be 0..3650")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	src, err := Dial(ctx, *srcURL, *srcUser, *srcPass, *srcToken, *timeout)
	if err != nil {
		fmt.Fprintf(stderr, "peregrine migrate: source: %v\n", err)
		return 1
	}
	defer src.Close(context.WithoutCancel(ctx))
	tgt, err := Dial(ctx, *tgtURL, *tgtUser, *tgtPass, *tgtToken, *timeout)
	if err != nil {
		fmt.Fprintf(stderr, "peregrine migrate: target: %v\n", err)
		return 1
	}
	defer tgt.Close(context.WithoutCancel(ctx))
	start := time.Now()
	rep, err := Run(ctx, Options{Source: src, Target: tgt, Prefix: *prefix, HistoryDays: *days, Checkpoint: *cpPath, Progress: stderr})
	if rep != nil {
		rep.Write(stdout)
		n := len(rep.Entries)
		fmt.Fprintf(stdout, "%d objects in %s (%.1f objects/s), %d source and %d target requests\n",
			n, time.Since(start).Round(time.Millisecond), float64(n)/max(time.Since(start).Seconds(), 1e-3), src.Calls.Load(), tgt.Calls.Load())
	}
	if err != nil {
		fmt.Fprintf(stderr, "peregrine migrate: %v\n", err)
		if *days > 0 {
			fmt.Fprintf(stderr, "peregrine migrate: run the same command again to resume the history copy (checkpoint %s)\n", *cpPath)
		}
		return 1
	}
	return 0
}
