package server

import (
	"net/http"
	"net/http/pprof"
)

// WithPprof serves Go's profiling endpoints under /debug/pprof/ to admin keys (GUARD_PPROF=true in the
// binary). Off by default: the paths are then unknown routes (404). With authentication off they are open
// to anyone who can reach the server, like every other route.
func WithPprof(enabled bool) Option { return func(c *config) { c.pprof = enabled } }

// pprofRoutes returns the /debug/pprof routes when enabled. pprof.Index serves the index and every named
// profile (heap, goroutine, allocs, block, mutex, threadcreate) from the path after /debug/pprof/.
func (s *Server) pprofRoutes() []route {
	if !s.cfg.pprof {
		return nil
	}
	h := func(method, path string, f http.HandlerFunc) route {
		return route{method: method, path: "/debug/pprof/" + path, level: levelAdmin, handler: f}
	}
	return []route{
		h("GET", "{$}", pprof.Index),
		h("GET", "{profile}", pprof.Index),
		h("GET", "cmdline", pprof.Cmdline),
		h("GET", "profile", pprof.Profile),
		h("GET", "symbol", pprof.Symbol),
		h("POST", "symbol", pprof.Symbol),
		h("GET", "trace", pprof.Trace),
	}
}
