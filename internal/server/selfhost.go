package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll/selfcheck"
)

// Self-monitoring host: Zabbix's fresh database has a host "Zabbix
// server" in group "Zabbix servers" watching the server's own figures;
// a fresh Peregrine data directory gets the same, once.
const (
	SelfHostName  = "Zabbix server"
	SelfHostGroup = "Zabbix servers"
)

// SelfHostMarkerPath is the file whose presence says the self-monitoring
// host was created once in this data directory: a user who deletes the
// host does not get it back at the next start.
func SelfHostMarkerPath(dataDir string) string {
	return filepath.Join(dataDir, "self-monitoring-host-created")
}

// SelfHostSpec is the self-monitoring host as created on first start:
// the internal items at 1m, but the version hourly.
func SelfHostSpec() catalog.HostSpec {
	item := func(key, name, vt, units, delay string) catalog.ItemSpec {
		return catalog.ItemSpec{Key: key, Name: name, Type: "internal", ValueType: vt, Units: units, Delay: delay}
	}
	items := []catalog.ItemSpec{
		item("zabbix[wcache,values]", "Values processed (total)", "unsigned", "", "1m"),
		item("zabbix[wcache,values,float]", "Values processed: numeric float (total)", "unsigned", "", "1m"),
		item("zabbix[wcache,values,uint]", "Values processed: numeric unsigned (total)", "unsigned", "", "1m"),
		item("zabbix[wcache,values,str]", "Values processed: character (total)", "unsigned", "", "1m"),
		item("zabbix[wcache,values,log]", "Values processed: log (total)", "unsigned", "", "1m"),
		item("zabbix[wcache,values,text]", "Values processed: text (total)", "unsigned", "", "1m"),
		item("zabbix[wcache,values,not supported]", "Values processed: not supported (total)", "unsigned", "", "1m"),
		item("zabbix[queue]", "Queue (checks over 5 s late)", "unsigned", "", "1m"),
		item("zabbix[queue,10m]", "Queue over 10 minutes", "unsigned", "", "1m"),
		item("zabbix[requiredperformance]", "Required performance (values per second)", "float", "vps", "1m"),
		item("zabbix[items]", "Number of enabled items on monitored hosts", "unsigned", "", "1m"),
		item("zabbix[items_unsupported]", "Number of not supported items", "unsigned", "", "1m"),
		item("zabbix[hosts]", "Number of monitored hosts", "unsigned", "", "1m"),
	}
	for _, p := range selfcheck.Processes {
		items = append(items, item("zabbix[process,"+p+",avg,busy]", "Utilization of "+p+" goroutines, in %", "float", "%", "1m"))
	}
	items = append(items,
		item("zabbix[uptime]", "Uptime", "unsigned", "uptime", "1m"),
		item("zabbix[version]", "Version", "character", "", "1h"),
	)
	// The agent interface a fresh 6.0 gives it (recorded from 6.0.14:
	// 127.0.0.1:10050), so that {HOST.CONN} and {HOST.IP} in scripts and
	// texts name the server's machine; no item of it polls the agent.
	iface := []catalog.InterfaceSpec{{Type: "agent", Main: true, IP: "127.0.0.1", Port: "10050"}}
	return catalog.HostSpec{Host: SelfHostName, Groups: []string{SelfHostGroup}, Items: items, Interfaces: iface}
}

// ensureSelfHost creates the self-monitoring host on the first start of
// a data directory, then writes the marker. A host of that name already
// there (created by the user, or by a start that stopped before the
// marker was written) is left as it is.
func (s *Server) ensureSelfHost(ctx context.Context) error {
	if s.pg != nil {
		// A cluster node: the marker is a catalog mark, shared by every
		// node, so a host deleted on one node is not made again by the
		// next node to become active.
		return s.ensureSelfHostMarked(ctx)
	}
	marker := SelfHostMarkerPath(s.cfg.DataDir)
	if _, err := os.Stat(marker); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot check the self-monitoring host marker %s: %w", marker, err)
	}
	if err := s.createSelfHost(ctx); err != nil {
		return err
	}
	const note = "Peregrine created its self-monitoring host in this data directory once; delete this file to have it created again at the next start (if no host of its name exists).\n"
	if err := os.WriteFile(marker, []byte(note), 0o600); err != nil {
		return fmt.Errorf("cannot write the self-monitoring host marker %s: %w", marker, err)
	}
	return nil
}

// selfHostMark is the catalog mark of a cluster's self-monitoring host.
const selfHostMark = "selfhost"

// ensureSelfHostMarked is ensureSelfHost with the marker in the catalog
// (state.store: postgres).
func (s *Server) ensureSelfHostMarked(ctx context.Context) error {
	if done, err := s.Catalog.Marked(ctx, selfHostMark); err != nil || done {
		return err
	}
	if err := s.createSelfHost(ctx); err != nil {
		return err
	}
	return s.Catalog.Mark(ctx, selfHostMark)
}

// createSelfHost creates the self-monitoring host unless a host of its
// name is there (created by the user, or by a start that stopped
// before the marker was written).
func (s *Server) createSelfHost(ctx context.Context) error {
	if s.Catalog.Snapshot().Host(SelfHostName) != nil {
		return nil
	}
	spec := SelfHostSpec()
	if _, err := s.Catalog.Apply(ctx, catalog.Spec{Hosts: []catalog.HostSpec{spec}}); err != nil {
		return fmt.Errorf("cannot create the self-monitoring host %q: %w", SelfHostName, err)
	}
	s.log.Info("created the self-monitoring host (first start of this data directory or cluster); delete it to stop monitoring the server, it will not come back",
		"host", SelfHostName, "group", SelfHostGroup, "items", len(spec.Items))
	return nil
}
