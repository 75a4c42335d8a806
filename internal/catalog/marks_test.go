package catalog

import (
	"context"
	"testing"
)

// TestMarks: a mark is recorded once, kept across a reopen, and is not
// a default set's name (EnsureDefaults still adds its sets).
func TestMarks(t *testing.T) {
	c, path := openTemp(t)
	ctx := context.Background()
	if ok, err := c.Marked(ctx, "selfhost"); err != nil || ok {
		t.Fatalf("a new catalog's mark: %v, %v", ok, err)
	}
	for range 2 {
		if err := c.Mark(ctx, "selfhost"); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	c, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if ok, err := c.Marked(ctx, "selfhost"); err != nil || !ok {
		t.Fatalf("the mark after a reopen: %v, %v", ok, err)
	}
	if ok, _ := c.Marked(ctx, "other"); ok {
		t.Fatal("an unset mark reads as set")
	}
	if d, err := c.EnsureDefaults(ctx); err != nil || len(d.HostGroups) == 0 {
		t.Fatalf("defaults after a mark: %+v, %v", d, err)
	}
}
