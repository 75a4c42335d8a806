package server

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/peregrine-mon/peregrine/internal/api"
	"github.com/peregrine-mon/peregrine/internal/ha"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/web"
)

// serveStandby serves the HTTP port while the node is standby, until
// the returned func is called (which closes the port, so that the active
// server can bind it). The API and UI serve reads from the cluster's
// stores opened read-only (hanode_standby.go), followed every
// standbyPoll, and refuse changes naming the active node; until those
// stores can be opened (no node has been active yet) the API answers
// apiinfo.version and refuses every other call. /healthz says "standby"
// with status 503, so a load balancer that checks it sends users to the
// active node; one that balances reads checks the API instead.
func (s *Server) serveStandby() (stop func()) {
	ln := s.httpLn
	httpsConf, _ := loadHTTPS(s.cfg.HTTP) // checked at start
	if httpsConf != nil {
		ln = tls.NewListener(ln, httpsConf)
	}
	var reads atomic.Pointer[standbyReads]
	apiH := standbyHandler(reads.Load, s.standbyAPI)
	mux := http.NewServeMux()
	mux.Handle("/api_jsonrpc.php", apiH)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"status":"standby"}`+"\n")
	})
	if s.cfg.HTTP.UI {
		ui, err := web.New(web.Options{
			API: apiH, AdminPasswordFile: adminPasswordPath(s.cfg.DataDir),
			TLS: httpsConf != nil, HSTSMaxAge: s.cfg.HTTP.HSTSMaxAge.Std(),
			Logger: s.log.With("component", "web"), Metrics: selfmon.NewRegistry(),
		})
		if err != nil {
			s.log.Error("standby: no web UI", "err", err)
		} else {
			ui.Register(mux)
		}
	}
	var handler http.Handler = mux
	if httpsConf != nil {
		handler = hsts(mux, s.cfg.HTTP.HSTSMaxAge.Std())
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: 5 * time.Minute,
		MaxHeaderBytes: 64 << 10, ErrorLog: slog.NewLogLogger(s.log.With("component", "http").Handler(), slog.LevelDebug)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("standby http", "err", err)
		}
	}()
	fctx, stopFollow := context.WithCancel(context.Background())
	followed := make(chan *standbyReads, 1)
	go func() { followed <- s.followStandby(fctx, func(r *standbyReads) { reads.Store(r) }) }()
	s.log.Info("standby: http listening", "addr", s.httpLn.Addr().String())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
		stopFollow()
		if r := <-followed; r != nil {
			r.close() // no call is running: the server has shut down
		}
	}
}

// standbyAPI is the JSON-RPC endpoint of a standby node.
func (s *Server) standbyAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	var req struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if r.Method != http.MethodPost || json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req) != nil {
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": nil,
			"error": map[string]any{"code": -32700, "message": "Parse error", "data": "Invalid JSON. An error occurred on the server while parsing the JSON text."}})
		return
	}
	if len(req.ID) == 0 {
		req.ID = json.RawMessage("null")
	}
	if req.Method == "apiinfo.version" {
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "result": api.Version, "id": req.ID})
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID,
		"error": map[string]any{"code": -32500, "message": "Application error.", "data": s.standbyText(r.Context(), standbyNoReads)}})
}

// standbyChange is standbyText's method for a change refused on a
// standby; standbyNoReads for every call while it cannot read the
// cluster's stores.
const (
	standbyChange  = ""
	standbyNoReads = "\x00"
)

// standbyText says that this node is a standby, what it does not
// serve, and which node is active.
func (s *Server) standbyText(ctx context.Context, method string) string {
	active := "none at the moment (a standby takes over within the failover delay)"
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if cl, err := s.node.Admin().Cluster(ctx); err == nil {
		for _, n := range cl.Nodes {
			if n.Status == ha.StatusActive {
				active = fmt.Sprintf("%q at %s:%d", n.Name, n.Address, n.Port)
			}
		}
	}
	node := s.cfg.HA.NodeName
	switch method {
	case standbyChange:
		return fmt.Sprintf("This node (%q) is a standby node of the HA cluster: it serves reads, and changes are made on the active node, %s.", node, active)
	case standbyNoReads:
		return fmt.Sprintf("This node (%q) is a standby node of the HA cluster and cannot read the cluster's state yet (no node has been active, or PostgreSQL or ClickHouse is out of reach); the active node is %s.", node, active)
	}
	return fmt.Sprintf("This node (%q) is a standby node of the HA cluster and does not serve %s; the active node is %s.", node, method, active)
}
