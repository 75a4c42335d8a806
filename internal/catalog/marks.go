package catalog

import (
	"context"
	"fmt"
	"strings"
)

// A mark records in the catalog that something was done once for the
// whole database, shared by every node of an HA cluster (where a file
// in one node's data directory would not be): a row of
// catalog_defaults named "mark:" + name, beside the default sets'.

// Marked reports whether Mark(name) was committed.
func (c *Catalog) Marked(ctx context.Context, name string) (bool, error) {
	var n int
	if err := c.db.QueryRowContext(ctx, "SELECT count(*) FROM catalog_defaults WHERE name = ?", markName(name)).Scan(&n); err != nil {
		return false, fmt.Errorf("catalog: cannot read mark %q: %w", name, err)
	}
	return n > 0, nil
}

// Mark records name once (a second Mark changes nothing), in a write
// transaction (fenced on PostgreSQL).
func (c *Catalog) Mark(ctx context.Context, name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	tx, err := c.begin(ctx)
	if err != nil {
		return fmt.Errorf("catalog: cannot write mark %q: %w", name, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "INSERT OR IGNORE INTO catalog_defaults (name, version) VALUES (?, 1)", markName(name)); err != nil {
		return fmt.Errorf("catalog: cannot write mark %q: %w", name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("catalog: cannot write mark %q: %w", name, err)
	}
	return nil
}

func markName(name string) string { return "mark:" + strings.TrimSpace(name) }
