package server

import (
	"math"
	"net/http"
	"net/http/pprof"
	"strconv"
)

// maxPprofSeconds caps the seconds parameter of the profiling endpoints (profile, trace, and the delta
// form of the named profiles): 30, the CPU profile's default. Go's handlers take any value, or fall back
// to 30 s on one they cannot parse (seconds=99999999999999999999 held the connection 30 s); a value past
// the cap, or not a whole number of seconds, is now a 422 naming the parameter.
const maxPprofSeconds = 30

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
		return route{method: method, path: "/debug/pprof/" + path, level: levelAdmin, handler: s.pprofSeconds(f)}
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

// pprofSeconds checks the seconds query parameter before f runs: absent, or a whole number from 1 to
// maxPprofSeconds; else 422 with code "range" (any number beyond the bounds, however spelled: 1e400,
// 99999999999999999999, 0, -5) or "type" (not a number, or a fraction).
func (s *Server) pprofSeconds(f http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if v, ok := r.URL.Query()["seconds"]; ok {
			n, err := strconv.ParseFloat(v[0], 64)
			switch {
			case err != nil && !math.IsInf(n, 0), math.IsNaN(n):
				s.writeErr(w, r, invalidParam("seconds", "type", "must be a whole number of seconds from 1 to 30"))
				return
			case n < 1 || n > maxPprofSeconds:
				s.writeErr(w, r, invalidParam("seconds", "range", "must be a whole number of seconds from 1 to 30"))
				return
			case n != math.Trunc(n):
				s.writeErr(w, r, invalidParam("seconds", "type", "must be a whole number of seconds from 1 to 30"))
				return
			}
		}
		f(w, r)
	}
}
