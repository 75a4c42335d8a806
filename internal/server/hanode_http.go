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
	"time"

	"github.com/peregrine-mon/peregrine/internal/api"
	"github.com/peregrine-mon/peregrine/internal/ha"
)

// serveStandby serves the HTTP port while the node is standby, until
// the returned func is called (which closes the port, so that the active
// server can bind it). Until the catalog and users are kept in
// PostgreSQL a standby has nothing of its own to read: the API answers
// apiinfo.version, and every other method with an error naming the
// active node; /healthz says "standby" with status 503, so a load
// balancer sends users to the active node.
func (s *Server) serveStandby() (stop func()) {
	ln := s.httpLn
	if httpsConf, err := loadHTTPS(s.cfg.HTTP); err == nil && httpsConf != nil {
		ln = tls.NewListener(ln, httpsConf)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api_jsonrpc.php", s.standbyAPI)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"status":"standby"}`+"\n")
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		ErrorLog: slog.NewLogLogger(s.log.With("component", "http").Handler(), slog.LevelDebug)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("standby http", "err", err)
		}
	}()
	s.log.Info("standby: http listening", "addr", s.httpLn.Addr().String())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
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
		"error": map[string]any{"code": -32500, "message": "Application error.", "data": s.standbyText(r.Context())}})
}

// standbyText says that this node is a standby and which node is active.
func (s *Server) standbyText(ctx context.Context) string {
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
	return fmt.Sprintf("This node (%q) is a standby node of the HA cluster and serves no API calls yet; the active node is %s.", s.cfg.HA.NodeName, active)
}
