package api

import (
	"context"
	"strconv"
	"time"

	"github.com/peregrine-mon/peregrine/internal/alert"
	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// The notification families share this file: the Alerting interface
// and their registration; their write methods' objects are read in the
// dialect of params_alert.go. Each family has its own file:
// mediatype.go, action.go, alert.go, media.go (users' media), script.go.

// Alerting is what mediatype.*, action.*, alert.get and users' media
// need: the notification configuration (catalog) and the alerts
// (package alert).
type Alerting interface {
	AlertConfig() *catalog.AlertConfig
	EditAlerts(ctx context.Context, fn func(*catalog.AlertConfig) error) error
	Alerts(keep func(*alert.Alert) bool) []alert.Alert
	// MinStepDuration is the shortest esc_period accepted.
	MinStepDuration() time.Duration
	// RunScript runs a global script's command for a host now
	// (script.execute), bounded by the command timeout.
	RunScript(ctx context.Context, sc *catalog.GlobalScript, host *catalog.Host, command string) (string, error)
}

// AlertQueues is an optional part of Alerting: the backlog per media
// type (alerts waiting or being sent, escalations waiting for room in
// the queue), for mediatype.get's selectQueue.
type AlertQueues interface {
	Queues() map[uint64]alert.QueueState
}

func (s *Server) registerAlerting() {
	if s.opts.Alerting == nil {
		return
	}
	s.methods["mediatype.get"] = &method{role: RoleAdmin, call: s.mediatypeGet}
	s.methods["mediatype.create"] = &method{role: RoleSuperAdmin, call: s.mediatypeCreate}
	s.methods["mediatype.update"] = &method{role: RoleSuperAdmin, call: s.mediatypeUpdate}
	s.methods["mediatype.delete"] = &method{role: RoleSuperAdmin, call: s.mediatypeDelete}
	s.methods["action.get"] = &method{role: RoleAdmin, call: s.actionGet}
	s.methods["action.create"] = &method{role: RoleAdmin, call: s.actionCreate}
	s.methods["action.update"] = &method{role: RoleAdmin, call: s.actionUpdate}
	s.methods["action.delete"] = &method{role: RoleAdmin, call: s.actionDelete}
	s.methods["alert.get"] = &method{role: RoleUser, call: s.alertGet}
	s.registerScripts()
	s.registerMediaTypeTest()
	s.registerCorrelations()
}

func u64(id uint64) string { return strconv.FormatUint(id, 10) }
func istr(i int) string    { return strconv.Itoa(i) }
