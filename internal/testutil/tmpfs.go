package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// tmpfsEnv carries, to a re-executed test binary, the test to run on a
// tmpfs of its own and where to mount it: "<test name>|<dir>|<bytes>".
const tmpfsEnv = "PEREGRINE_TMPFS_TEST"

// InTmpfs runs the calling test with a small tmpfs of size bytes, so
// that a disk can really fill up (ENOSPC from the kernel, free space
// from statfs) without root and without touching the machine's disks.
//
// Outside (the go test process) it re-executes the test binary for this
// test only under `unshare -rm` (a user and a mount namespace of its
// own), reports the child's outcome and returns "", false: the caller
// returns at once. Inside (the re-executed binary) it mounts a tmpfs of
// size bytes on a fresh directory, private to the namespace, and returns
// that directory and true: the caller runs its scenario there. The mount
// disappears with the child.
//
// The test is skipped where unshare is missing or user namespaces are
// not permitted (except under CI, where .ci/run installs util-linux and
// the runner permits them).
func InTmpfs(t *testing.T, size int64) (dir string, inside bool) {
	t.Helper()
	if v := os.Getenv(tmpfsEnv); v != "" {
		name, rest, _ := strings.Cut(v, "|")
		if name != t.Name() {
			t.Skipf("another test's tmpfs child (%s)", name)
		}
		dir, _, _ = strings.Cut(rest, "|")
		if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
			t.Fatalf("cannot mount a tmpfs on %s in the namespace: %v", dir, err)
		}
		t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
		return dir, true
	}
	unshare := Need(t, "unshare", "util-linux")
	dir = t.TempDir()
	args := []string{"-rm", os.Args[0], "-test.run", "^" + t.Name() + "$", "-test.count=1", "-test.v"}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	cmd := exec.Command(unshare, args...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%s|%d", tmpfsEnv, t.Name(), dir, size))
	out, err := cmd.CombinedOutput()
	text := string(out)
	switch {
	case err != nil && strings.Contains(text, "unshare failed") && os.Getenv("CI") == "":
		t.Skipf("cannot create a user and mount namespace here: %s", strings.TrimSpace(text))
	case err != nil:
		t.Fatalf("the test on its tmpfs failed: %v\n%s", err, text)
	case strings.Contains(text, "--- SKIP: "+t.Name()+" ("):
		t.Skipf("skipped on its tmpfs:\n%s", text)
	case !strings.Contains(text, "--- PASS: "+t.Name()+" ("):
		t.Fatalf("the test on its tmpfs did not pass:\n%s", text)
	}
	t.Logf("on its tmpfs:\n%s", text)
	return "", false
}
