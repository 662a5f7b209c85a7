package problem

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// TestRespondEncodesBeforeTheStatusLine checks that a value that cannot be encoded gives a logged 500
// problem with a whole body, never a 200 with an empty or truncated one, and that a value that can be
// gives its status with a Content-Length that matches the body.
func TestRespondEncodesBeforeTheStatusLine(t *testing.T) {
	cases := []struct {
		name   string
		v      any
		status int
		logged bool
	}{
		{"encodable", map[string]any{"avg": 1.5, "n": 2}, http.StatusOK, false},
		{"infinity", map[string]any{"avg": math.Inf(1)}, http.StatusInternalServerError, true},
		{"NaN deep inside", []any{1, map[string]any{"x": []float64{math.NaN()}}}, http.StatusInternalServerError, true},
		{"unsupported type", map[string]any{"c": make(chan int)}, http.StatusInternalServerError, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, fn := range []string{"Respond", "WriteJSON"} {
				core, logs := observer.New(zap.ErrorLevel)
				rec := httptest.NewRecorder()
				rec.Header().Set(RequestIDHeader, "rid-7")
				req := httptest.NewRequest(http.MethodGet, "/api/v1/observability/stats", nil)
				if fn == "Respond" {
					Respond(rec, req, zap.New(core), http.StatusOK, tc.v)
				} else {
					WriteJSON(rec, http.StatusOK, tc.v)
				}
				if rec.Code != tc.status {
					t.Fatalf("%s: status %d, want %d; body %q", fn, rec.Code, tc.status, rec.Body)
				}
				if cl := rec.Header().Get("Content-Length"); cl != strconv.Itoa(rec.Body.Len()) {
					t.Fatalf("%s: Content-Length %q for a body of %d bytes", fn, cl, rec.Body.Len())
				}
				var body map[string]any
				if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil && tc.status == http.StatusOK {
					t.Fatalf("%s: body %q: %v", fn, rec.Body, err)
				}
				if tc.status != http.StatusOK {
					var p Body
					if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.ErrorCode != CodeInternal || p.Status != 500 {
						t.Fatalf("%s: body %q is not a 500 problem (%v)", fn, rec.Body, err)
					}
					if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
						t.Fatalf("%s: Content-Type %q", fn, ct)
					}
					if fn == "Respond" && (p.Instance != "/api/v1/observability/stats" || p.RequestID != "rid-7") {
						t.Fatalf("%s: problem %+v lacks the instance or request id", fn, p)
					}
				}
				if fn == "Respond" && (logs.Len() > 0) != tc.logged {
					t.Fatalf("%s: %d error logs, want logged=%v", fn, logs.Len(), tc.logged)
				}
			}
		})
	}
}

func BenchmarkRespond(b *testing.B) {
	v := map[string]any{"events": []int{1, 2, 3}, "total": 3}
	req := httptest.NewRequest(http.MethodGet, "/x", nil)
	b.ReportAllocs()
	for b.Loop() {
		Respond(httptest.NewRecorder(), req, nil, http.StatusOK, v)
	}
}
