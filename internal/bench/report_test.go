package bench

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// checkSVG parses an SVG file as XML and checks that it names both axes
// and, when wantIdeal is not empty, draws the ideal line with that legend.
func checkSVG(t *testing.T, path, xlabel, wantIdeal string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(b))
	var texts []string
	classes := map[string]int{}
	var inText bool
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", path, err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			for _, a := range e.Attr {
				if a.Name.Local == "class" {
					classes[a.Value]++
				}
			}
			inText = e.Name.Local == "text"
		case xml.CharData:
			if inText {
				texts = append(texts, string(e))
			}
		case xml.EndElement:
			inText = false
		}
	}
	all := strings.Join(texts, "\n")
	if !strings.Contains(all, xlabel) {
		t.Errorf("%s: no x axis label %q in %q", path, xlabel, all)
	}
	if classes["xlabel"] != 1 || classes["ylabel"] != 1 || classes["legend"] != 1 {
		t.Errorf("%s: classes %v", path, classes)
	}
	if wantIdeal != "" && (classes["ideal"] != 1 || !strings.Contains(all, wantIdeal)) {
		t.Errorf("%s: no ideal line %q (classes %v)", path, wantIdeal, classes)
	}
}

func TestReportWriteAndReadBack(t *testing.T) {
	dir := t.TempDir()
	ws := &CSV{File: "write-scaling.csv", Header: WriteScalingColumns}
	for i, n := range []int64{10, 20, 40} {
		written := n * 100 * 30
		if i == 2 {
			written = written * 8 / 10
		}
		ws.Rows = append(ws.Rows, []string{"peregrine", fi(n), fi(n * 100), "1", f(float64(n * 100)), "30", fi(n * 100 * 30), fi(written),
			f(float64(written) / float64(n*100*30)), fi(written), "0", "0", "0", "0", "0", "0.01", "0.5", "false", "0.002", "0.01"})
	}
	rep := &Report{
		Title:  "test report",
		Header: [][2]string{{"command", "`peregrine bench write-scaling`"}, {"machine", "2 cores | pipes"}},
		Sections: []Section{{
			Title:  "write-scaling",
			Text:   []string{"text"},
			Tables: []Table{{Header: []string{"a", "b"}, Rows: [][]string{{"1", "x|y"}}}},
			Notes:  []string{"stopped here"},
			Plots:  []NamedPlot{{File: "write-scaling.svg", Plot: WriteScalingPlot([]*CSV{ws})}},
			CSV:    ws,
		}},
	}
	if err := rep.Write(dir); err != nil {
		t.Fatal(err)
	}
	back, err := ReadCSV(filepath.Join(dir, "write-scaling.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ws.Header, back.Header); diff != "" {
		t.Errorf("header: %s", diff)
	}
	if diff := cmp.Diff(ws.Rows, back.Rows); diff != "" {
		t.Errorf("rows: %s", diff)
	}
	if got := back.Float(2, "written_ratio"); got != 0.8 {
		t.Errorf("written_ratio read back as %v", got)
	}
	if !math.IsNaN(back.Float(0, "no-such")) || back.Get(5, "target") != "" {
		t.Error("absent cells must read as NaN / empty")
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, want := range []string{"# test report", `2 cores \| pipes`, "| 1 | x\\|y |", "> stopped here", "![write-scaling: values written per window vs offered load](write-scaling.svg)", "[write-scaling.csv](write-scaling.csv)"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	checkSVG(t, filepath.Join(dir, "write-scaling.svg"), "offered load (values/s = targets × items / interval)", "ideal (offered × 30 s window)")

	// The ideal line goes from 0 to the largest offered load × window.
	p := WriteScalingPlot([]*CSV{back})
	if p.Series[0].Style != StyleIdeal || p.Series[0].Y[1] != 4000*30 {
		t.Errorf("ideal series %+v", p.Series[0])
	}
	if k := knee(back); k != 2000 {
		t.Errorf("knee %v, want 2000", k)
	}
}

func TestPlotEdgeCases(t *testing.T) {
	for _, p := range []Plot{
		{Title: "empty", XLabel: "x (s)", YLabel: "y"},
		{Title: "nan <&>", XLabel: "x & y", YLabel: "y", Series: []Series{{Name: "a<b", X: []float64{1, 2}, Y: []float64{math.NaN(), 3}}}},
		{Title: "tiny", XLabel: "x", YLabel: "y", Series: []Series{{Name: "s", X: []float64{0.001, 0.002}, Y: []float64{1e-4, 2e-4}}}, Marks: []Mark{{X: 0.0015, Label: "knee"}}},
	} {
		path := filepath.Join(t.TempDir(), "p.svg")
		os.WriteFile(path, p.SVG(), 0o644)
		checkSVG(t, path, p.XLabel, "")
	}
}

func TestFmtTick(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 500: "500", 1500: "1.5k", 2e6: "2M", 2.5e6: "2.5M", 0.25: "0.25", 3e9: "3G"} {
		if got := fmtTick(in); got != want {
			t.Errorf("fmtTick(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestRowCounterSplits(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","result":[{"itemid":"1","clock":"1","value":"1","ns":"0"},{"itemid":"1","clock":"2","value":"2","ns":"0"},{"itemid":"1","clock":"3","value":"3","ns":"0"}],"id":1}`)
	for split := 1; split < len(body); split++ {
		var rc rowCounter
		rc.Write(body[:split])
		rc.Write(body[split:])
		if rc.rows != 3 || rc.bytes != int64(len(body)) {
			t.Fatalf("split at %d: rows %d bytes %d", split, rc.rows, rc.bytes)
		}
	}
	// Byte by byte.
	var rc rowCounter
	for i := range body {
		rc.Write(body[i : i+1])
	}
	if rc.rows != 3 {
		t.Fatalf("byte by byte: %d rows", rc.rows)
	}
}

func TestParseReply(t *testing.T) {
	for _, tc := range []struct {
		reply     string
		n         int
		pr, fl    int64
		wantError string
	}{
		{`{"response":"success","info":"processed: 3; failed: 1; total: 4; seconds spent: 0.000055"}`, 4, 3, 1, ""},
		{`{"response":"success","info":"processed: 3; failed: 1; total: 4; seconds spent: 0.000055"}`, 5, 3, 1, "total 4"},
		{`{"response":"failed","info":"cannot parse"}`, 1, 0, 0, "refused"},
		{`{"response":"success"}`, 1, 0, 0, "without processed"},
	} {
		pr, fl, err := parseReply([]byte(tc.reply), tc.n)
		if tc.wantError != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantError) {
				t.Errorf("%s: err %v, want %q", tc.reply, err, tc.wantError)
			}
			continue
		}
		if err != nil || pr != tc.pr || fl != tc.fl {
			t.Errorf("%s: %d %d %v", tc.reply, pr, fl, err)
		}
	}
}

func TestFramesPartialAndClocks(t *testing.T) {
	items := ItemSet{Hosts: []string{"h0", "h1"}, Keys: []string{"a", "b", "c"}}
	fs := newFrameSet(items, 4, Data{Shape: ShapeConstant})
	if fs.frames() != 2 || fs.frameLen(0) != 4 || fs.frameLen(1) != 2 {
		t.Fatalf("frames %d", fs.frames())
	}
	out := fs.build(nil, 0, 2, 0, &SendPlan{StartClock: 1700000000, ValueClockStep: 10, NS: 123})
	// The constant shape is the harness's old data, byte for byte.
	want := `{"request":"sender data","data":[{"host":"h0","key":"a","value":"20.00","clock":1700000000,"ns":123},{"host":"h0","key":"b","value":"20.07","clock":1700000010,"ns":123}]}`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
}

// fakeTrapper answers each frame with a success reply for all its values
// and then, like Zabbix 6.0, closes the connection.
func fakeTrapper(t *testing.T) (addr string, frames func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	count := make(chan int, 1)
	count <- 0
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				rd := zbx.NewReader(c, zbx.ReaderOptions{Timeout: 5 * time.Second})
				_, p, err := rd.ReadFrame()
				if err != nil {
					return
				}
				n := bytes.Count(p, []byte(`"host":`))
				// Counted before the reply: the sender may return, and
				// the test read the count, as soon as the reply arrives.
				count <- <-count + 1
				c.Write(zbx.AppendFrame(nil, []byte(`{"response":"success","info":"processed: `+itoa(n)+`; failed: 0; total: `+itoa(n)+`; seconds spent: 0.000001"}`), zbx.FlagProtocol))
			}()
		}
	}()
	return ln.Addr().String(), func() int { n := <-count; count <- n; return n }
}

func itoa(n int) string { return fi(int64(n)) }

func TestSenderAgainstClosingTrapper(t *testing.T) {
	addr, frames := fakeTrapper(t)
	items := ItemSet{Hosts: []string{"h"}, Keys: []string{"a", "b", "c", "d", "e"}}
	for _, mode := range []string{"auto", "no"} {
		s := Sender{Addr: addr, Conns: 2, Persistent: mode, Timeout: 5 * time.Second}
		before := frames()
		res, err := s.Send(t.Context(), SendPlan{Items: items, PacketValues: 2, TotalValues: 12, StartClock: 1700000000}, nil)
		if err != nil {
			t.Fatal(err)
		}
		// 12 values of 5 items in frames of 2, 2, 1 per round: 2 full
		// rounds (6 frames) and 2 values (1 frame).
		if res.Sent != 12 || res.Processed != 12 || res.Errors != 0 || res.Frames != 7 || frames()-before != 7 {
			t.Errorf("%s: %+v (server saw %d frames)", mode, res, frames()-before)
		}
		if mode == "no" && res.Reconnect != 0 {
			t.Errorf("no: reconnects %d", res.Reconnect)
		}
	}
	// "yes" must not hide the server's close: the second frame on a
	// connection fails.
	s := Sender{Addr: addr, Conns: 1, Persistent: "yes", Timeout: 5 * time.Second}
	res, _ := s.Send(t.Context(), SendPlan{Items: items, PacketValues: 5, Rounds: 2, StartClock: 1700000000}, nil)
	if res.Errors == 0 {
		t.Errorf("yes: %+v", res)
	}
}

func TestLatencyStats(t *testing.T) {
	st := latencyStats([]float64{5, 1, 3, 2, 4, 100, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19})
	if st.median != 10.5 || st.p95 != 19 || st.min != 1 || st.max != 100 {
		t.Errorf("%+v", st)
	}
	if st := latencyStats(nil); !math.IsNaN(st.median) {
		t.Errorf("empty: %+v", st)
	}
}

func TestCPUDiscovery(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	pids := ListeningPIDs(port)
	if len(pids) != 1 || pids[0] != os.Getpid() {
		t.Fatalf("ListeningPIDs(%d) = %v, want [%d]", port, pids, os.Getpid())
	}
	sc := ServerCPU{PIDs: pids}
	m := StartCPU(sc)
	deadline := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(deadline) {
	}
	u := m.Stop()
	if !u.Measured || u.Generator <= 0 {
		t.Errorf("%+v", u)
	}
	if mach := DescribeMachine(); mach.Cores <= 0 || mach.MemoryGB <= 0 {
		t.Errorf("%+v", mach)
	}
}

// A trapper that refuses connections: every frame fails with an error
// naming the address, none counts as sent, and the send still ends when
// its units are used up.
func TestSenderRefusedConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connect is refused
	s := Sender{Addr: addr, Conns: 2, Persistent: "yes", Timeout: 5 * time.Second}
	items := ItemSet{Hosts: []string{"h"}, Keys: []string{"a", "b", "c"}}
	res, err := s.Send(t.Context(), SendPlan{Items: items, PacketValues: 2, Rounds: 3, StartClock: 1700000000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 3 rounds of 2 frames each.
	if res.Errors != 6 || res.Sent != 0 || res.Frames != 0 {
		t.Errorf("%+v", res)
	}
	if res.FirstErr == nil || !strings.Contains(res.FirstErr.Error(), "cannot connect to the trapper at "+addr) {
		t.Errorf("first error %v does not name the address", res.FirstErr)
	}
}
