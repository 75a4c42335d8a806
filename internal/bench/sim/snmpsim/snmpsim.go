package snmpsim

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gosnmp/gosnmp"
)

// Options configures a Fleet.
type Options struct {
	// Agents is the number of agents. Default 1.
	Agents int
	// DistinctAddrs puts agent i on 127.0.<i/250>.<i%250+2>, each with
	// its own address (as devices are), rather than on ports of
	// 127.0.0.1.
	DistinctAddrs bool
	// Community is the community agents answer; others are ignored, as
	// real agents do. Default "public".
	Community string
	// Table is every agent's MIB: numeric OIDs with a leading dot and
	// their values. Agents answer GETNEXT and GETBULK in OID order.
	Table []gosnmp.SnmpPDU
	// MaxOIDs, if positive: a GET of more OIDs is answered tooBig.
	MaxOIDs int
	// Hook, if set, sees each decoded request first: drop ignores it,
	// raw (non-nil) is sent instead of the normal response.
	Hook func(agent int, req *gosnmp.SnmpPacket) (raw []byte, drop bool)
}

// Fleet is a running set of simulated agents.
type Fleet struct {
	opts     Options
	conns    []*net.UDPConn
	table    []gosnmp.SnmpPDU // sorted by OID
	index    map[string]int
	wg       sync.WaitGroup
	closing  atomic.Bool
	requests atomic.Uint64
	oids     atomic.Uint64
	bad      atomic.Uint64
}

// Start starts the agents.
func Start(opts Options) (*Fleet, error) {
	if opts.Agents <= 0 {
		opts.Agents = 1
	}
	if opts.Community == "" {
		opts.Community = "public"
	}
	f := &Fleet{opts: opts, index: map[string]int{}}
	f.table = slices.Clone(opts.Table)
	slices.SortFunc(f.table, func(a, b gosnmp.SnmpPDU) int { return CompareOIDs(a.Name, b.Name) })
	for i, v := range f.table {
		f.index[v.Name] = i
	}
	for i := 0; i < opts.Agents; i++ {
		addr := "127.0.0.1:0"
		if opts.DistinctAddrs {
			addr = fmt.Sprintf("127.0.%d.%d:0", i/250, i%250+2)
		}
		ua, _ := net.ResolveUDPAddr("udp", addr)
		c, err := net.ListenUDP("udp", ua)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("snmpsim: agent %d: %w", i, err)
		}
		f.conns = append(f.conns, c)
	}
	for i, c := range f.conns {
		f.wg.Add(1)
		go f.serve(i, c)
	}
	return f, nil
}

// Addr returns agent i's "ip:port".
func (f *Fleet) Addr(i int) string { return f.conns[i].LocalAddr().String() }

// Requests returns the requests the agents decoded.
func (f *Fleet) Requests() uint64 { return f.requests.Load() }

// OIDs returns the values the agents answered to GETs (one per OID
// found): what a benchmark counts at the devices, whichever poller asked.
func (f *Fleet) OIDs() uint64 { return f.oids.Load() }

// Undecodable returns the datagrams the agents could not decode.
func (f *Fleet) Undecodable() uint64 { return f.bad.Load() }

// Close stops every agent and waits for them.
func (f *Fleet) Close() {
	if f.closing.Swap(true) {
		return
	}
	for _, c := range f.conns {
		c.Close()
	}
	f.wg.Wait()
}

func (f *Fleet) serve(agent int, c *net.UDPConn) {
	defer f.wg.Done()
	buf := make([]byte, 65535)
	dec := &gosnmp.GoSNMP{}
	for {
		n, from, err := c.ReadFromUDP(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) || f.closing.Load() {
				return
			}
			continue
		}
		req, err := dec.SnmpDecodePacket(buf[:n])
		if err != nil || req.Version == gosnmp.Version3 {
			f.bad.Add(1)
			continue
		}
		f.requests.Add(1)
		if req.Community != f.opts.Community {
			continue
		}
		if f.opts.Hook != nil {
			raw, drop := f.opts.Hook(agent, req)
			if drop {
				continue
			}
			if raw != nil {
				c.WriteToUDP(raw, from)
				continue
			}
		}
		out, err := f.answer(req).MarshalMsg()
		if err != nil {
			continue
		}
		c.WriteToUDP(out, from)
	}
}

func (f *Fleet) answer(req *gosnmp.SnmpPacket) *gosnmp.SnmpPacket {
	resp := &gosnmp.SnmpPacket{Version: req.Version, Community: req.Community, PDUType: gosnmp.GetResponse, RequestID: req.RequestID}
	v1 := req.Version == gosnmp.Version1
	switch req.PDUType {
	case gosnmp.GetRequest:
		if f.opts.MaxOIDs > 0 && len(req.Variables) > f.opts.MaxOIDs {
			resp.Error = gosnmp.TooBig
			return resp
		}
		for i, q := range req.Variables {
			if j, ok := f.index[q.Name]; ok {
				resp.Variables = append(resp.Variables, f.table[j])
				f.oids.Add(1)
				continue
			}
			if v1 {
				resp.Error, resp.ErrorIndex = gosnmp.NoSuchName, uint8(i+1)
				resp.Variables = req.Variables
				return resp
			}
			typ := gosnmp.NoSuchObject
			if f.hasObject(q.Name) {
				typ = gosnmp.NoSuchInstance
			}
			resp.Variables = append(resp.Variables, gosnmp.SnmpPDU{Name: q.Name, Type: typ})
		}
	case gosnmp.GetNextRequest:
		for i, q := range req.Variables {
			j := f.after(q.Name)
			if j >= len(f.table) {
				if v1 {
					resp.Error, resp.ErrorIndex = gosnmp.NoSuchName, uint8(i+1)
					resp.Variables = req.Variables
					return resp
				}
				resp.Variables = append(resp.Variables, gosnmp.SnmpPDU{Name: q.Name, Type: gosnmp.EndOfMibView})
				continue
			}
			resp.Variables = append(resp.Variables, f.table[j])
		}
	case gosnmp.GetBulkRequest:
		for _, q := range req.Variables {
			j := f.after(q.Name)
			for r := 0; r < int(req.MaxRepetitions); r++ {
				if j+r >= len(f.table) {
					resp.Variables = append(resp.Variables, gosnmp.SnmpPDU{Name: q.Name, Type: gosnmp.EndOfMibView})
					break
				}
				resp.Variables = append(resp.Variables, f.table[j+r])
			}
		}
	default:
		resp.Error = gosnmp.GenErr
	}
	return resp
}

// after returns the index of the first table entry after oid.
func (f *Fleet) after(oid string) int {
	j, found := slices.BinarySearchFunc(f.table, oid, func(e gosnmp.SnmpPDU, t string) int { return CompareOIDs(e.Name, t) })
	if found {
		j++
	}
	return j
}

// hasObject reports whether the table has instances of oid's parent
// (so a missing instance is noSuchInstance, not noSuchObject).
func (f *Fleet) hasObject(oid string) bool {
	i := strings.LastIndexByte(oid, '.')
	if i <= 0 {
		return false
	}
	j := f.after(oid[:i])
	return j < len(f.table) && strings.HasPrefix(f.table[j].Name, oid[:i+1])
}

// CompareOIDs orders numeric OIDs by sub-identifier.
func CompareOIDs(a, b string) int {
	as, bs := strings.Split(strings.TrimPrefix(a, "."), "."), strings.Split(strings.TrimPrefix(b, "."), ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, _ := strconv.ParseUint(as[i], 10, 64)
		y, _ := strconv.ParseUint(bs[i], 10, 64)
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return len(as) - len(bs)
}
