//go:build !linux

package jsvm

import (
	"os"
	"runtime/debug"
	"syscall"
)

// limitProcess sets the Go runtime's soft limit only: the hard limit of
// the address space is Linux's (worker_linux.go).
func limitProcess(limit uint64) { debug.SetMemoryLimit(memoryLimitFor(limit)) }

// setNice is Linux's (worker_linux.go).
func setNice(int) {}

func workerSysProcAttr() *syscall.SysProcAttr { return nil }

func selfPath() (string, error) { return os.Executable() }
