package jsvm

import (
	"bytes"
	"os"
	"runtime/debug"
	"strconv"
	"syscall"
)

// limitProcess bounds the worker's memory: the Go runtime's soft limit
// (see memoryLimitFor), and a hard limit of its address space, so that
// one native call that allocates at once far more than the limit
// ('x'.repeat(1e10), which no interrupt can stop mid-call) fails the
// allocation, which ends the worker, rather than taking the machine's
// memory. The address space a Go program reserves at start (about
// 1.2 GB, little of it backed) is measured and added.
func limitProcess(limit uint64) {
	debug.SetMemoryLimit(memoryLimitFor(limit))
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return
	}
	f := bytes.Fields(b)
	if len(f) == 0 {
		return
	}
	pages, err := strconv.ParseUint(string(f[0]), 10, 64)
	if err != nil {
		return
	}
	as := pages*uint64(os.Getpagesize()) + uint64(memoryLimitFor(limit)) + limit/2 + 256<<20
	_ = syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: as, Max: as})
}

// setNice lowers the priority of every thread of the worker (Linux's
// nice value is per thread; threads started later inherit it from the
// thread that starts them), so that a looping script yields the CPU to
// the server's own work first.
func setNice(n int) {
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, 0, n)
		return
	}
	for _, e := range entries {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			_ = syscall.Setpriority(syscall.PRIO_PROCESS, tid, n)
		}
	}
}

// workerSysProcAttr starts a worker in its own process group, killed if
// the server dies.
func workerSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// selfPath is the running program, even if its file was replaced since
// it started (an upgrade): the worker speaks the same protocol.
func selfPath() (string, error) { return "/proc/self/exe", nil }
