package clickhouse

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestClientErrorsAndFailover: an endpoint that does not answer is
// skipped for the next; an error answer is final, parsed into its code
// and classified; credentials from the URL are used and never appear in
// an error.
func TestClientErrorsAndFailover(t *testing.T) {
	var gotUser, gotPass string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotUser, gotPass, _ = r.BasicAuth()
		body, _ := io.ReadAll(r.Body)
		switch {
		case bytes.Contains(body, []byte("version")):
			io.WriteString(w, "18.16.1\n")
		case strings.Contains(r.URL.Query().Get("query"), "INSERT"):
			w.WriteHeader(500)
			io.WriteString(w, "Code: 164, e.displayText() = DB::Exception: Cannot execute query in readonly mode, e.what() = DB::Exception\n")
		default:
			w.WriteHeader(500)
			io.WriteString(w, "Code: 201, e.displayText() = DB::Exception: Quota for user default for 3600 s has been exceeded\n")
		}
	}))
	defer srv.Close()
	// A closed port on loopback: connection refused.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/"
	ln.Close()
	live := strings.Replace(srv.URL, "http://", "http://bob:s3cret@", 1)
	c, err := newClient(clientOptions{URLs: []string{dead, live}, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := 0; i < 4; i++ { // whichever endpoint the rotation starts at
		v, err := c.queryString(ctx, "SELECT version()")
		if err != nil || v != "18.16.1" {
			t.Fatalf("query with one dead endpoint: %q, %v", v, err)
		}
	}
	if gotUser != "bob" || gotPass != "s3cret" {
		t.Fatalf("basic auth %q/%q, want the URL's credentials", gotUser, gotPass)
	}
	for _, k := range []struct {
		run  func() error
		kind string
		code int
	}{
		{func() error { return c.insert(ctx, "db.history", "itemid", []byte{1}, nil) }, "readonly", 164},
		{func() error { return c.exec(ctx, "SELECT 1") }, "quota", 201},
	} {
		err := k.run()
		var se *ServerError
		if !errors.As(err, &se) || se.Code != k.code || Kind(err) != k.kind {
			t.Fatalf("error %v: want code %d, kind %s (got %s)", err, k.code, k.kind, Kind(err))
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Fatalf("error message leaks the password: %v", err)
		}
	}
	c2, _ := newClient(clientOptions{URLs: []string{dead}, Timeout: time.Second})
	err = c2.exec(ctx, "SELECT 1")
	if err == nil || Kind(err) != "unreachable" {
		t.Fatalf("dead endpoint: %v, kind %s", err, Kind(err))
	}
	if _, err := newClient(clientOptions{URLs: []string{"ftp://u:pw@h/"}}); err == nil || strings.Contains(err.Error(), "pw") {
		t.Fatalf("bad URL: %v", err)
	}
}

// TestRowBinaryRoundTrip: what the encoder writes the decoder reads,
// including strings longer than one LEB128 byte and the extremes; a
// truncated stream is an error, not a short row.
func TestRowBinaryRoundTrip(t *testing.T) {
	var b []byte
	long := strings.Repeat("é", 200)
	b = appendU64(b, math.MaxUint64)
	b = appendU32(b, math.MaxUint32)
	b = appendF64(b, -1.5e300)
	b = appendStr(b, long)
	b = appendStr(b, "")
	b = append(b, 7)
	d := newRowReader(bytes.NewReader(b))
	if !d.more() {
		t.Fatal("no row")
	}
	if u, v, f, s, e, x := d.u64(), d.u32(), d.f64(), d.string(), d.string(), d.u8(); d.err != nil || u != math.MaxUint64 || v != math.MaxUint32 || f != -1.5e300 || s != long || e != "" || x != 7 {
		t.Fatalf("decoded %v %v %v %d bytes %q %v, err %v", u, v, f, len(s), e, x, d.err)
	}
	if d.more() {
		t.Fatal("more after the last row")
	}
	d = newRowReader(bytes.NewReader(b[:len(b)-300]))
	d.more()
	d.u64()
	d.u32()
	d.f64()
	_ = d.string()
	if d.err == nil {
		t.Fatal("truncated string decoded without error")
	}
}

func TestVersionFeaturesAndDDL(t *testing.T) {
	for _, c := range []struct {
		s      string
		codecs bool
		ttl    bool
	}{{"18.16.1", false, false}, {"19.6.2.11", false, true}, {"19.11.3", true, true}, {"24.3.1.2672", true, true}} {
		v, err := parseVersion(c.s)
		if err != nil {
			t.Fatal(err)
		}
		if f := FeaturesOf(v); f.Codecs != c.codecs || f.TTL != c.ttl {
			t.Fatalf("%s: %+v", c.s, f)
		}
	}
	if _, err := parseVersion("garbage"); err == nil {
		t.Fatal("parsed garbage")
	}
	plain := createTable("db", tables[0], Features{}, time.Hour)
	if strings.Contains(plain, "CODEC") || strings.Contains(plain, "TTL") || !strings.Contains(plain, "ORDER BY (itemid, clock, ns)") || !strings.Contains(plain, "PARTITION BY toYYYYMMDD(clock)") {
		t.Fatalf("18.16 DDL: %s", plain)
	}
	rich := createTable("db", tables[0], Features{Codecs: true, TTL: true}, time.Hour)
	if !strings.Contains(rich, "value Float64 CODEC(Gorilla, ZSTD)") || !strings.Contains(rich, "clock DateTime CODEC(DoubleDelta, ZSTD)") || !strings.Contains(rich, "TTL clock + INTERVAL 3600 SECOND") {
		t.Fatalf("current DDL: %s", rich)
	}
}
