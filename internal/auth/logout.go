package auth

import (
	"context"
	"fmt"
)

// Logging out on an HA standby (issue 31). A read-only store (an HA
// standby, sqlitedb.PG.ReadOnly) writes nothing but this: Logout deletes
// the session's row in its own transaction, without the lease's fence.
// Why that is safe when every other write to the shared state is fenced:
//
//   - The fence keeps a node that lost its lease from changing what the
//     active node decides; a logout decides nothing. It removes one row,
//     which its caller proved to hold (the session's secret), and no
//     write brings that row back: a session is made only by a login, with
//     a new random secret, and nothing else inserts sessions.
//   - The active node's other writes to the row are its last-access
//     UPDATE and its prune's DELETE; after the logout both match no row.
//     A deleted user's sessions go with the user. So the logout commutes
//     with every fenced write: whatever order PostgreSQL applies them in,
//     the outcome is the same, which is what fencing exists to ensure.
//   - A deposed or partitioned node's logout is still its user's wish;
//     applying it late ends a session the user asked to end.
//
// A login stays refused on a standby: it writes more than its row (the
// failed-login count, the block, the attempt clock), which does race the
// active node's decisions.
//
// The active node caches sessions and, on a writer, trusts that nobody
// else deletes rows: DropEnded, called on the cluster's poll, drops the
// cached sessions whose rows are gone, so a logout on a standby ends the
// session on the active node within one poll.

// DropEnded drops from the cache the sessions whose rows were deleted by
// another node (a logout on an HA standby) and reports how many. It
// reads the cached sessions' rows once; a store with nothing cached
// reads nothing.
func (s *Store) DropEnded(ctx context.Context) (int, error) {
	if err := s.begin(); err != nil {
		return 0, err
	}
	defer s.end()
	s.mu.RLock()
	hs := make([]secretHash, 0, len(s.sessions))
	for h := range s.sessions {
		hs = append(hs, h)
	}
	s.mu.RUnlock()
	if len(hs) == 0 {
		return 0, nil
	}
	live := make(map[secretHash]bool, len(hs))
	const chunk = 500
	for start := 0; start < len(hs); start += chunk {
		part := hs[start:min(start+chunk, len(hs))]
		byText := make(map[string]secretHash, len(part))
		q, args := "SELECT id_hash FROM sessions WHERE id_hash IN (", make([]any, 0, len(part))
		for i, h := range part {
			if i > 0 {
				q += ","
			}
			q += "?"
			byText[h.String()] = h
			args = append(args, h.String())
		}
		rows, err := s.db.QueryContext(ctx, q+")", args...)
		if err != nil {
			return 0, fmt.Errorf("auth: cannot read sessions: %w", err)
		}
		for rows.Next() {
			var text string
			if err := rows.Scan(&text); err != nil {
				rows.Close()
				return 0, fmt.Errorf("auth: cannot read sessions: %w", err)
			}
			if h, ok := byText[text]; ok {
				live[h] = true
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return 0, fmt.Errorf("auth: cannot read sessions: %w", err)
		}
	}
	// A session filled after the read above is not dropped: only the
	// ones read as gone, and still the same entries.
	s.fillMu.Lock()
	defer s.fillMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, h := range hs {
		if !live[h] && s.sessions[h] != nil {
			delete(s.sessions, h)
			n++
		}
	}
	return n, nil
}
