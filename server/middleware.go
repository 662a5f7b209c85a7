package server

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"runtime/debug"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/guardrail-control/guard/llmproxy"
	"github.com/guardrail-control/guard/server/problem"
)

// middleware wraps the dispatcher: version header and request id first (so every response, errors and
// 401s included, carries them), then the access log (which sees the final status, panics included), then
// panic recovery, then the body limit.
func (s *Server) middleware(next http.Handler) http.Handler {
	h := s.limitBody(next)
	h = s.observeHTTP(h)
	h = s.recoverPanics(h)
	h = s.accessLog(h)
	return s.stamp(h)
}

// stamp sets X-Guard-Server-Version (and X-Agent-Control-Server-Version), X-Request-Id and
// X-Content-Type-Options on the response before anything else runs.
func (s *Server) stamp(next http.Handler) http.Handler {
	// One shared value per version header (guard's own, and the reference API version the reference SDKs
	// compare with theirs): assigning it costs no allocation per response, where Header.Set allocates a
	// slice per header. len == cap, so a Header.Add elsewhere copies instead of writing into the shared array.
	version := []string{s.cfg.version}[:1:1]
	refVersion := []string{RefAPIVersion}[:1:1]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h[VersionHeader] = version
		h[refServerVersionHeader] = refVersion
		id := r.Header.Get(problem.RequestIDHeader)
		if !validRequestID(id) {
			id = newRequestID()
		}
		h.Set(problem.RequestIDHeader, id)
		h[nosniffHeader] = nosniff
		next.ServeHTTP(w, r)
	})
}

// X-Content-Type-Options: nosniff on every response keeps a browser from reading a JSON answer (which may
// echo stored text) as HTML or script. The value slice is shared: Header.Set and Add never write into an
// existing slice, and sharing it saves an allocation per request.
const nosniffHeader = "X-Content-Type-Options"

var nosniff = []string{"nosniff"}

// validRequestID accepts an incoming request id of 1-128 characters of [A-Za-z0-9._:-], so that a client's
// id can be followed through the logs without letting arbitrary text into them.
func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

// requestIDPrefix makes generated ids unique across processes; the counter makes them unique within one.
var (
	requestIDPrefix = func() string {
		var b [6]byte
		_, _ = rand.Read(b[:])
		return hex.EncodeToString(b[:])
	}()
	requestIDCounter atomic.Uint64
)

// newRequestID returns a process-unique id such as "3f9a0c12d4e5-000000000000002a" without a system call.
func newRequestID() string {
	var buf [12 + 1 + 16]byte
	copy(buf[:], requestIDPrefix)
	buf[12] = '-'
	n := requestIDCounter.Add(1)
	const digits = "0123456789abcdef"
	for i := len(buf) - 1; i > 12; i-- {
		buf[i] = digits[n&0xf]
		n >>= 4
	}
	return string(buf[:])
}

// recoverPanics turns a panic in a handler into 500 INTERNAL_ERROR (when nothing was written yet); the
// panic value and stack are logged, never sent.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("panic serving request", zap.String("method", r.Method), zap.String("path", r.URL.Path),
				zap.String("request_id", w.Header().Get(problem.RequestIDHeader)),
				zap.String("panic", fmt.Sprint(v)), zap.ByteString("stack", debug.Stack()))
			if sw.wrote {
				return
			}
			problem.Write(w, r, nil, problem.New(http.StatusInternalServerError, problem.CodeInternal, "internal server error"))
		}()
		next.ServeHTTP(sw, r)
	})
}

// limitBody caps the request body; reading beyond gives *http.MaxBytesError, which problem.ReadBody turns
// into 413 PAYLOAD_TOO_LARGE.
func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.llmProxy != nil && llmproxy.IsRoute(r.URL.Path) {
			next.ServeHTTP(w, r) // the proxy bounds its bodies itself (llmproxy.Config.MaxRequestBytes)
			return
		}
		if r.ContentLength > s.cfg.bodyLimit {
			problem.Write(w, r, s.log, problem.New(http.StatusRequestEntityTooLarge, problem.CodePayloadTooLarge,
				fmt.Sprintf("the request body is larger than %d bytes", s.cfg.bodyLimit)))
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = http.MaxBytesReader(w, r.Body, s.cfg.bodyLimit)
		}
		next.ServeHTTP(w, r)
	})
}

// statusWriter records whether the response has started.
type statusWriter struct {
	http.ResponseWriter
	wrote bool
}

func (w *statusWriter) WriteHeader(code int) {
	w.wrote = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
