package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/peregrine-mon/peregrine/internal/audit"
)

// A logout on an HA standby (docs/ha.md): the session's row is deleted
// by the standby without the lease (auth/logout.go says why that is
// safe), and the active node drops it from its cache within a poll
// (dropEndedSessions). The logout's audit record is the one thing the
// standby cannot write: the audit log is the active node's fenced log,
// read by every standby in commit order. So the standby hands the record
// to the active node with a PostgreSQL notification on channel
// logoutAuditChannel, and the active node, which listens there, appends
// it to its audit log (fenced, as every record). A notification is not
// stored: one sent while no node is active, or while the active node's
// listening connection is being made again, is lost, and that logout is
// not in the audit log (the standby logs it at Warn).

// logoutAuditChannel is the notification channel of standbys' logout
// records.
const logoutAuditChannel = "peregrine_logout_audit"

// standbyAudit is a standby's audit log: reads from the follower;
// Append (reached by user.logout only: every other write is refused
// before the audit) notifies the active node.
type standbyAudit struct {
	*audit.Log
	pool *pgxpool.Pool
	warn func(msg string, args ...any)
}

func (a standbyAudit) Append(recs []audit.Record) error {
	for _, r := range recs {
		if r.Action != audit.ActionLogout {
			return audit.ErrReadOnly
		}
	}
	b, err := json.Marshal(recs)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := a.pool.Exec(ctx, "SELECT pg_notify($1, $2)", logoutAuditChannel, string(b)); err != nil {
		a.warn("standby: cannot hand a logout's audit record to the active node; it is not in the audit log", "err", err)
		return fmt.Errorf("cannot hand the logout's audit record to the active node: %w", err)
	}
	return nil
}

// listenLogouts, on an active node, appends the logout records standbys
// notify (standbyAudit) to the audit log until ctx ends, listening again
// after a lost connection. Standalone servers return at once.
func (s *Server) listenLogouts(ctx context.Context) {
	if s.pg == nil || s.Audit == nil {
		return
	}
	for ctx.Err() == nil {
		err := s.listenLogoutsOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		s.log.Warn("cannot listen for standbys' logout records; listening again in a second", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (s *Server) listenLogoutsOnce(ctx context.Context) error {
	pc, err := s.pg.node.Pool().Acquire(ctx)
	if err != nil {
		return err
	}
	// The connection ends listening with it: it is taken from the pool,
	// never given back.
	conn := pc.Hijack()
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+logoutAuditChannel); err != nil {
		return err
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		var recs []audit.Record
		if err := json.Unmarshal([]byte(n.Payload), &recs); err != nil {
			s.log.Warn("a standby's logout record does not decode; dropped", "err", err)
			continue
		}
		kept := recs[:0]
		for _, r := range recs {
			if r.Action == audit.ActionLogout && r.ResourceType == audit.ResourceUser {
				kept = append(kept, r)
			}
		}
		if len(kept) == 0 {
			continue
		}
		if err := s.Audit.Append(kept); err != nil && !errors.Is(err, context.Canceled) {
			s.log.Warn("cannot write a standby's logout record to the audit log", "err", err)
		}
	}
}
