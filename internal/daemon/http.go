package daemon

import (
	"encoding/json"
	"net/http"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/hooks"
	"github.com/switchboard-mcp/switchboard/internal/tokenauth"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// Handler returns everything served on the listen address: the gateway's
// MCP endpoints, /healthz, /readyz, /metrics and the web console (at / and
// under /ui/), all behind the Host and Origin checks.
func (d *Daemon) Handler() http.Handler {
	mux := http.NewServeMux()
	gw := d.gw.Handler()
	mux.Handle("/mcp", gw)
	mux.Handle("/mcp/", gw)
	mux.Handle("/sse", gw)
	mux.Handle("/sse/", gw)
	// OAuth's protected resource metadata is public (RFC 9728): no Host,
	// Origin or token check.
	mux.Handle(tokenauth.WellKnownPath, d.gw.MetadataHandler())
	mux.Handle(tokenauth.WellKnownPath+"/", d.gw.MetadataHandler())
	// Probes need no token (load balancers); metrics name every server
	// and tool, so they need one whenever tokens are configured.
	mux.Handle("GET /healthz", d.gw.Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok"})
	}), false))
	mux.Handle("GET /readyz", d.gw.Guard(http.HandlerFunc(d.readyz), false))
	mux.Handle("GET /metrics", d.gw.Guard(d.metrics.Handler(), true))
	// Events from other tools: a token whenever tokens are configured.
	mux.Handle(hooks.EventPath, d.gw.Guard(d.hooksHandler(), true))
	d.mountConsole(mux)
	return d.writes.wrap(d.bodies.wrap(mux))
}

// readiness is /readyz's answer.
type readiness struct {
	Ready bool `json:"ready"`
	// Servers maps every enabled server to its state.
	Servers map[string]string `json:"servers"`
	// Waiting lists the enabled servers not connected yet.
	Waiting []string `json:"waiting,omitempty"`
}

// readyz answers 200 when every enabled server is connected and its tools
// discovered (servers a user or the health loop disabled do not count),
// 503 otherwise.
func (d *Daemon) readyz(w http.ResponseWriter, r *http.Request) {
	rd := readiness{Ready: true, Servers: map[string]string{}}
	cfg := d.config()
	for _, s := range d.pool.Snapshots() {
		if !s.Enabled {
			continue
		}
		rd.Servers[s.Server] = string(s.State)
		srv, _ := cfg.Server(s.Server)
		discovered := !srv.LoadTools || !d.cat.Fetched(s.Server, catalog.KindTools).IsZero()
		if s.State != upstream.StateConnected || !discovered {
			rd.Ready = false
			rd.Waiting = append(rd.Waiting, s.Server)
		}
	}
	status := http.StatusOK
	if !rd.Ready {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, rd)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
