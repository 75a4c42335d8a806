package catalogtest_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

var spec = catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h1", Groups: []string{"G"}, Items: []catalog.ItemSpec{
	{Key: "f1", ValueType: "float"}, {Key: "s1", ValueType: "character"},
}}}}

func TestOpenApplies(t *testing.T) {
	c := catalogtest.Open(t, spec)
	snap := c.Snapshot()
	if snap.Lookup("h1", "f1") == nil || snap.Lookup("h1", "s1") == nil {
		t.Fatal("spec items not in the snapshot")
	}
	if snap.Lookup("h1", "nope") != nil {
		t.Fatal("an item the spec does not name is in the snapshot")
	}
}

// Write must leave the file closed (its lock released) with the spec in
// it: a server opens it next.
func TestWriteLeavesFileClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	catalogtest.Write(t, path, spec)
	c, err := catalog.Open(context.Background(), catalog.Options{Path: path})
	if err != nil {
		t.Fatalf("reopening: %v", err)
	}
	defer c.Close()
	if c.Snapshot().Lookup("h1", "f1") == nil {
		t.Fatal("spec not persisted")
	}
}

// fatalTB records the first Fatalf and stops the calling goroutine, as
// testing.T does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestBadSpecFailsWithContext(t *testing.T) {
	bad := catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h1", Items: []catalog.ItemSpec{{Key: "x", ValueType: "no-such-type"}}}}}
	path := filepath.Join(t.TempDir(), "c.db")
	f := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		catalogtest.Write(f, path, bad)
	}()
	<-done
	if !strings.Contains(f.msg, "applying the test spec to "+path) || !strings.Contains(f.msg, "no-such-type") {
		t.Fatalf("Fatalf message %q does not name the file and the bad value", f.msg)
	}
	// The failed setup closed the file it opened.
	c, err := catalog.Open(context.Background(), catalog.Options{Path: path})
	if err != nil {
		t.Fatalf("reopening after a failed apply: %v", err)
	}
	c.Close()
}
