package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// BenchmarkEvaluationHandler measures POST /evaluation through the full handler stack (middleware, auth,
// strict decoding, the cached engine, encoding) for an agent with 10 regex and list controls.
func BenchmarkEvaluationHandler(b *testing.B) {
	for _, bc := range []struct {
		name            string
		auth, accessLog bool
		scoped          bool // the key is a named key limited to agents (keys.go): its scope is checked
		controls        int
		otel            bool // a span per request (sampled, child of a traceparent), batched to an exporter that drops it
		traceparent     bool // the request carries a traceparent (as every request of a traced Go client does)
	}{{"auth=false", false, false, false, 10, false, false}, {"auth=true", true, false, false, 10, false, false},
		{"auth=true,scoped", true, false, true, 10, false, false}, {"auth=true,accesslog=on", true, true, false, 10, false, false},
		// Export off, but the caller traces: what "no cost when off" must hold for.
		{"auth=false,otel=off,traceparent", false, false, false, 10, false, true},
		{"auth=false,otel=on", false, false, false, 10, true, true}, {"auth=false,controls=1000", false, false, false, 1000, false, false}} {
		auth := bc.auth
		b.Run(bc.name, func(b *testing.B) {
			var opts []Option
			if auth {
				opts = append(opts, WithAuth(true, []string{"regular-key-1", "regular-key-2"}, []string{"admin-key"}))
			}
			key := "regular-key-2"
			if bc.scoped { // a named key given by its digest, limited to a name and a pattern
				key = "scoped-key"
				opts = append(opts, WithKeys([]Key{{Name: "bench-team", SHA256: fmt.Sprintf("%x", digest(key)), Agents: []string{"other", "team-*", "bench"}}}))
			}
			if bc.accessLog { // the production JSON encoder at info, written to io.Discard
				enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
				opts = append(opts, WithAccessLog(true), WithLogger(zap.New(zapcore.NewCore(enc, zapcore.AddSync(io.Discard), zapcore.InfoLevel))))
			}
			if bc.otel {
				tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
				b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
				opts = append(opts, WithTracerProvider(tp))
			}
			ts := newTS(b, opts...)
			setup := newTSOn(b, ts.st) // an open server on the same store for the set-up calls
			setup.initAgent("bench")
			for i := 0; i < bc.controls; i++ {
				data := regexData(fmt.Sprintf(`\bforbidden%d\b`, i), "deny")
				if i%2 == 1 || i >= 10 { // beyond the first 10: list controls (a 1000-control result is ~175 kB)
					data = map[string]any{
						"condition": map[string]any{"selector": map[string]any{"path": "input"},
							"evaluator": map[string]any{"name": "list", "config": map[string]any{"values": []string{fmt.Sprintf("banned%d", i), "other"}, "match_mode": "contains"}}},
						"action": map[string]any{"decision": "warn"},
					}
				}
				setup.link("bench", setup.createControl(fmt.Sprintf("c%d", i), data))
			}
			body := []byte(`{"agent_name":"bench","stage":"pre","step":{"type":"llm","name":"chat","input":"Please summarise the quarterly report for the team and list the three main risks.","context":{"user":"u-1"}}}`)
			base := httptest.NewRequest("POST", "/api/v1/evaluation", nil)
			base.Header.Set("Content-Type", "application/json")
			if auth {
				base.Header.Set(APIKeyHeader, key)
			}
			base.ContentLength = int64(len(body))
			if bc.traceparent {
				base.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
			}
			req := func() *http.Request { // a shallow copy with a fresh body: what net/http hands a handler
				r := *base
				r.Body = io.NopCloser(bytes.NewReader(body))
				return &r
			}
			w := httptest.NewRecorder()
			ts.srv.ServeHTTP(w, req())
			if w.Code != 200 {
				b.Fatalf("%d %s", w.Code, w.Body)
			}
			b.ReportAllocs()
			cpu0 := processCPU()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				w := &discardWriter{h: make(http.Header, 4)}
				ts.srv.ServeHTTP(w, req())
				if w.code != 200 {
					b.Fatalf("status %d", w.code)
				}
			}
			b.StopTimer()
			// CPU time per request (all threads of the process): meaningful on a shared, loaded machine
			// where wall time per op also counts time spent waiting for a core.
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU returns the user+system CPU time of the process in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// discardWriter is a minimal ResponseWriter that keeps nothing but the status.
type discardWriter struct {
	h    http.Header
	code int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = 200
	}
	return io.Discard.Write(b)
}
func (w *discardWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}
