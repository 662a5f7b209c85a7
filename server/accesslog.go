package server

import (
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/guardrail-control/guard/server/problem"
)

// WithAccessLog turns the access log on or off (default off; the guard binary turns it on unless
// GUARD_ACCESS_LOG=false). Each request gives one line on the logger named agent_control.access: at info,
// except the probe and scrape routes (/health, /ready, /metrics), which log at debug so that a probe every
// few seconds does not drown the rest.
func WithAccessLog(enabled bool) Option { return func(c *config) { c.accessLog = enabled } }

// Roles of the access log's role field: which kind of key the request carried. The key itself is never logged.
const (
	roleNone    = "none"    // no key, or authentication is off
	roleRegular = "regular" // a regular key
	roleAdmin   = "admin"   // an admin key
	roleInvalid = "invalid" // a key that matches no configured key
)

// quietRoutes are the route patterns logged at debug.
var quietRoutes = map[string]bool{"GET /health": true, "GET /ready": true, "GET /metrics": true}

// accessLog wraps next with the access log when it is enabled. It sits outside the dispatcher, so it
// reads the route pattern the mux set on the request (r.Pattern) after next returns; the route field is
// its path (the metrics' route label).
func (s *Server) accessLog(next http.Handler) http.Handler {
	if !s.cfg.accessLog {
		return next
	}
	log := s.cfg.logger.Named("agent_control.access")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		aw := &accessWriter{ResponseWriter: w}
		next.ServeHTTP(aw, r)
		level := zapcore.InfoLevel
		if quietRoutes[r.Pattern] {
			level = zapcore.DebugLevel
		}
		ce := log.Check(level, "request")
		if ce == nil {
			return // the level is off: no fields built, no key digested
		}
		role, keyName := aw.roleOf(s.auth, r)
		status := aw.status
		if status == 0 {
			status = http.StatusOK
		}
		ce.Write(
			zap.String("method", methodName(r.Method)),
			zap.String("route", routePath(r.Pattern)),
			zap.Int("status", status),
			zap.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
			zap.Int64("bytes", aw.bytes),
			zap.String("request_id", w.Header().Get(problem.RequestIDHeader)),
			zap.String("remote", r.RemoteAddr),
			zap.String("role", role),
			zap.String("key", keyName),
		)
	})
}

// routePath is the path of a ServeMux pattern ("GET /x/{id}" -> "/x/{id}"; the method is its own field),
// "unmatched" for a request no route matched: the same values as the metrics' route label.
func routePath(pattern string) string {
	if pattern == "" {
		return "unmatched"
	}
	if i := strings.IndexByte(pattern, ' '); i >= 0 {
		return pattern[i+1:]
	}
	return pattern
}

// methodName keeps the logged method to the standard ones: a client can send any token.
func methodName(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "OTHER"
}

// roleOf is the role the authentication middleware noted for this request, or, on a route it does not
// guard (public routes), the role of the request's key worked out here: the key is digested once per
// request either way.
func (w *accessWriter) roleOf(a *authenticator, r *http.Request) (role, keyName string) {
	if w.role != "" {
		return w.role, w.keyName
	}
	return a.role(r.Header.Get(APIKeyHeader))
}

// noteRole records on the request's access-log writer, if any, the role the authentication middleware
// found, so that the access log need not digest the key again. It walks the writers wrapped around it.
func noteRole(w http.ResponseWriter, role, keyName string) {
	for w != nil {
		if aw, ok := w.(*accessWriter); ok {
			aw.role, aw.keyName = role, keyName
			return
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}

// role names the kind of key for the access log (roleNone when authentication is off: keys are then not
// checked, so nothing is known about them), with the key's name. It compares digests like wrap does.
func (a *authenticator) role(key string) (role, keyName string) {
	if !a.enabled || key == "" {
		return roleNone, ""
	}
	switch e := a.lookup(key); {
	case e == nil:
		return roleInvalid, ""
	case e.admin:
		return roleAdmin, e.name
	default:
		return roleRegular, e.name
	}
}

// accessWriter records the status and the number of body bytes written.
type accessWriter struct {
	http.ResponseWriter
	role    string // noted by the authentication middleware (noteRole); "" on routes it does not guard
	keyName string // the name of the key (KeyName), never the key
	status  int
	bytes   int64
}

func (w *accessWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *accessWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Flush forwards to the underlying writer when it can flush.
func (w *accessWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		if w.status == 0 {
			w.status = http.StatusOK
		}
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *accessWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
