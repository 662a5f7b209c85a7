package problem

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/guardrail-control/guard"
)

// TestWriteBodyShape checks that every problem body carries the contract's keys (section 3), with
// errors always present: [] for errors without field problems, the problems for a 422.
func TestWriteBodyShape(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		status     int
		code       string
		wantErrors int
	}{
		{"not found", guard.ErrControlNotFound, http.StatusNotFound, CodeControlNotFound, 0},
		{"internal", errors.New("boom: secret detail"), http.StatusInternalServerError, CodeInternal, 0},
		{"validation", Validation("bad", guard.Problem{Field: "name", Code: "invalid", Message: "m"}),
			http.StatusUnprocessableEntity, CodeValidation, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			rec.Header().Set(RequestIDHeader, "rid-1")
			Write(rec, httptest.NewRequest(http.MethodGet, "/api/v1/controls/42", nil), nil, tc.err)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d", rec.Code, tc.status)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
				t.Fatalf("Content-Type %q", ct)
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
				t.Fatalf("body: %v", err)
			}
			for _, k := range []string{"type", "title", "status", "detail", "error_code", "instance", "request_id", "errors"} {
				if _, ok := m[k]; !ok {
					t.Errorf("key %q missing: %s", k, rec.Body)
				}
			}
			var errs []guard.Problem
			if err := json.Unmarshal(m["errors"], &errs); err != nil || errs == nil || len(errs) != tc.wantErrors {
				t.Errorf("errors = %s, want a list of %d", m["errors"], tc.wantErrors)
			}
			var code string
			_ = json.Unmarshal(m["error_code"], &code)
			if code != tc.code {
				t.Errorf("error_code %q, want %q", code, tc.code)
			}
		})
	}
}
