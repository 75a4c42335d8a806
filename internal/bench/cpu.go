package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// SelfCPU is the user+system CPU this process has used (getrusage).
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// clockTick is USER_HZ, 100 on every Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

type procStat struct {
	pid, ppid int
	comm      string
	cpu       time.Duration // utime + stime
	reaped    time.Duration // cutime + cstime: its children waited for
}

func readProcStat(pid int) (procStat, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, false
	}
	open, close := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || close < open || close+2 > len(b) {
		return procStat{}, false
	}
	f := strings.Fields(string(b[close+2:]))
	if len(f) < 13 {
		return procStat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	var cut, cst int64
	if len(f) >= 15 {
		cut, _ = strconv.ParseInt(f[13], 10, 64)
		cst, _ = strconv.ParseInt(f[14], 10, 64)
	}
	return procStat{pid: pid, ppid: ppid, comm: string(b[open+1 : close]), cpu: time.Duration(ut+st) * clockTick,
		reaped: time.Duration(cut+cst) * clockTick}, true
}

func allProcs() map[int]procStat {
	ents, _ := os.ReadDir("/proc")
	out := make(map[int]procStat, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readProcStat(pid); ok {
			out[pid] = st
		}
	}
	return out
}

// ServerCPU samples the CPU of server processes: the given PIDs and all
// their descendants (Zabbix's forked workers, PostgreSQL's backends,
// PHP's workers).
type ServerCPU struct {
	PIDs []int
	// Self is set when one of the PIDs is this process (an in-process
	// server): its figure then includes the generator.
	Self bool
	// Reaped adds the CPU of children the tree has waited for (cutime,
	// cstime), so that short-lived children (a PostgreSQL backend per
	// connection) are counted; between two samples a child's time moves
	// from its own figure to its parent's when it is reaped.
	Reaped bool
}

// Sample is the summed CPU of the tree now. Processes that exited since
// the previous sample take their time with them (their parent's cutime
// is not counted), so short-lived children are undercounted.
func (s ServerCPU) Sample() time.Duration {
	if len(s.PIDs) == 0 {
		return 0
	}
	procs := allProcs()
	children := map[int][]int{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p.pid)
	}
	seen := map[int]bool{}
	var total time.Duration
	var walk func(int)
	walk = func(pid int) {
		if seen[pid] {
			return
		}
		seen[pid] = true
		if p, ok := procs[pid]; ok {
			total += p.cpu
			if s.Reaped {
				total += p.reaped
			}
		}
		for _, c := range children[pid] {
			walk(c)
		}
	}
	for _, pid := range s.PIDs {
		walk(pid)
	}
	return total
}

// Describe names the sampled processes ("zabbix_server(123) +40").
func (s ServerCPU) Describe() string {
	if len(s.PIDs) == 0 {
		return "not measured (no local server process found)"
	}
	procs := allProcs()
	var parts []string
	for _, pid := range s.PIDs {
		n := 0
		for _, p := range procs {
			for q := p.ppid; q > 1; q = procs[q].ppid {
				if q == pid {
					n++
					break
				}
				if _, ok := procs[q]; !ok {
					break
				}
			}
		}
		parts = append(parts, fmt.Sprintf("%s(%d)+%d descendants", procs[pid].comm, pid, n))
	}
	d := strings.Join(parts, ", ")
	if s.Self {
		d += " — the server runs inside the harness's process: its figure includes the generator"
	}
	return d
}

// ListeningPIDs returns the processes holding a listening TCP socket on
// port (any address), found through /proc/net/tcp{,6} and /proc/*/fd.
func ListeningPIDs(port int) []int {
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fs := strings.Fields(line)
			if len(fs) < 10 || fs[3] != "0A" { // 0A = LISTEN
				continue
			}
			i := strings.LastIndexByte(fs[1], ':')
			p, err := strconv.ParseInt(fs[1][i+1:], 16, 32)
			if err == nil && int(p) == port {
				inodes["socket:["+fs[9]+"]"] = true
			}
		}
	}
	if len(inodes) == 0 {
		return nil
	}
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join("/proc", e.Name(), "fd"))
		for _, fd := range fds {
			l, err := os.Readlink(filepath.Join("/proc", e.Name(), "fd", fd.Name()))
			if err == nil && inodes[l] {
				pids = append(pids, pid)
				break
			}
		}
	}
	return rootsOnly(pids)
}

// rootsOnly drops PIDs whose ancestor is also listed (forked workers
// inherit the listening socket).
func rootsOnly(pids []int) []int {
	set := map[int]bool{}
	for _, p := range pids {
		set[p] = true
	}
	var out []int
	for _, p := range pids {
		root := true
		for q := p; q > 1; {
			st, ok := readProcStat(q)
			if !ok {
				break
			}
			q = st.ppid
			if set[q] {
				root = false
				break
			}
		}
		if root {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Machine describes the host the harness runs on.
type Machine struct {
	Cores    int
	MemoryGB float64
	CPUModel string
	Kernel   string
	Go       string
	LoadAvg  string // 1, 5, 15-minute load averages at the start
}

// DescribeMachine reads /proc for the report's header.
func DescribeMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), Go: runtime.Version()}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				kb, _ := strconv.ParseFloat(f[1], 64)
				m.MemoryGB = kb / (1 << 20)
			}
		}
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	m.LoadAvg = LoadAvg()
	return m
}

// LoadAvg is the first three fields of /proc/loadavg.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// CPUMeter measures the generator's and the server's CPU over an interval.
type CPUMeter struct {
	server     ServerCPU
	t0         time.Time
	self0, sv0 time.Duration
}

// StartCPU begins an interval.
func StartCPU(server ServerCPU) *CPUMeter {
	return &CPUMeter{server: server, t0: time.Now(), self0: SelfCPU(), sv0: server.Sample()}
}

// CPUUse is one interval's CPU, in cores (1.0 = one core busy).
type CPUUse struct {
	Wall      time.Duration
	Generator float64
	Server    float64 // 0 when not measured
	Measured  bool
}

// Stop ends the interval.
func (m *CPUMeter) Stop() CPUUse {
	w := time.Since(m.t0)
	u := CPUUse{Wall: w, Measured: len(m.server.PIDs) > 0}
	if w <= 0 {
		return u
	}
	u.Generator = (SelfCPU() - m.self0).Seconds() / w.Seconds()
	if u.Measured {
		u.Server = (m.server.Sample() - m.sv0).Seconds() / w.Seconds()
	}
	return u
}

// GeneratorSaturated is the report's rule: the generator used 90 % of a
// core or more (its hot loops are then what limits the offered rate), or
// generator and server together used 90 % of the machine with the
// generator taking at least a quarter of it.
func (u CPUUse) GeneratorSaturated(cores int) bool {
	if u.Generator >= 0.9 {
		return true
	}
	total := u.Generator + u.Server
	return u.Measured && total >= 0.9*float64(cores) && u.Generator >= 0.25*total
}
