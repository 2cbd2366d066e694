package web

import (
	"context"
	"net/http"
	"time"

	"github.com/cauri-pay/cauri/internal/web/httpx"
)

// healthz answers 200 once the database answers, 503 otherwise.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.Health.Ping(ctx); err != nil {
		s.Logger.WarnContext(ctx, "health check: database does not answer", "err", err)
		httpx.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz is GET /readyz: 200 when the store can be written and read back
// (this node's heartbeat), 503 otherwise: a store that answers but cannot
// write (a full disk) takes the node out of the load balancer's rotation,
// while /healthz keeps saying the process is alive.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	node := s.Node
	if node == "" {
		node = "node"
	}
	if err := s.Health.Heartbeat(ctx, node, s.Now()); err != nil {
		s.Logger.ErrorContext(ctx, "readiness check: the database cannot be written or read", "err", err)
		httpx.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}
