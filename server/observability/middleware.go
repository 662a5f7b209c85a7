package observability

import (
	"net/http"
	"strings"
	"time"
)

// Middleware counts and times every request by route, method and status; the route label is the path
// pattern without its method ("/api/v1/controls/{control_id}"), the method is its own label. It reads r.Pattern after
// next has served the request, so next must be the *http.ServeMux itself or hand it the same *http.Request
// (middlewares that call r.WithContext belong outside this one); requests no pattern matched are labelled
// "unmatched". The raw path is never a label. With a nil *Metrics it returns next unchanged.
func (m *Metrics) Middleware(next http.Handler) http.Handler {
	if m == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		panicked := true
		defer func() {
			status := sw.status
			if panicked || status == 0 {
				if panicked {
					status = http.StatusInternalServerError
				} else {
					status = http.StatusOK
				}
			}
			route := routeLabel(r.Pattern)
			m.observeRequest(route, methodLabel(r.Method), status, time.Since(start))
		}()
		next.ServeHTTP(sw, r)
		panicked = false
	})
}

// routeLabel is the path part of a ServeMux pattern ("GET /x/{id}" -> "/x/{id}"), or UnmatchedRoute.
func routeLabel(pattern string) string {
	if pattern == "" {
		return UnmatchedRoute
	}
	if i := strings.IndexByte(pattern, ' '); i >= 0 {
		return strings.TrimLeft(pattern[i+1:], " \t")
	}
	return pattern
}

// methodLabel keeps the method label to the standard methods: clients can send any token.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "OTHER"
}

// statusWriter remembers the status code written through it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush forwards to the underlying writer when it can flush (streaming responses).
func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
