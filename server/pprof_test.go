package server

import (
	"strings"
	"testing"

	"github.com/guardrail-control/guard/server/problem"
)

// TestPprof: with WithPprof(true) the profiling endpoints answer admin keys only; without it they are 404
// for everyone, admin keys included.
func TestPprof(t *testing.T) {
	on := newTS(t, WithAuth(true, []string{"reg"}, []string{"adm"}), WithPprof(true))
	off := newTSOn(t, on.st, WithAuth(true, []string{"reg"}, []string{"adm"}))
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap?debug=1", "/debug/pprof/goroutine?debug=1",
		"/debug/pprof/cmdline", "/debug/pprof/symbol", "/debug/pprof/profile?seconds=1"} {
		on.expectProblem(401, problem.CodeAuthMissingKey, "GET", path, nil)
		on.expectProblem(403, problem.CodeAuthInsufficient, "GET", path, nil, APIKeyHeader, "reg")
		r := on.do("GET", path, nil, APIKeyHeader, "adm")
		if r.Code != 200 || len(r.Body) == 0 {
			t.Errorf("GET %s (admin, pprof on): %d", path, r.Code)
		}
		off.expectProblem(404, problem.CodeNotFound, "GET", path, nil, APIKeyHeader, "adm")
	}
	if r := on.do("GET", "/debug/pprof/", nil, APIKeyHeader, "adm"); !strings.Contains(string(r.Body), "goroutine") {
		t.Errorf("index: %s", r.Body)
	}
}

// TestPprofSecondsCapped: issue 23. seconds=99999999999999999999 held the connection (Go's handler fell
// back to 30 s on a value it could not parse). Any seconds outside 1..30, however spelled, is a 422
// naming the parameter before a profile starts; the answers come at once.
func TestPprofSecondsCapped(t *testing.T) {
	ts := newTS(t, WithAuth(true, []string{"reg"}, []string{"adm"}), WithPprof(true))
	for _, tc := range []struct{ path, code string }{
		{"/debug/pprof/profile?seconds=99999999999999999999", "range"},
		{"/debug/pprof/profile?seconds=1e400", "range"},
		{"/debug/pprof/profile?seconds=31", "range"},
		{"/debug/pprof/profile?seconds=0", "range"},
		{"/debug/pprof/profile?seconds=-5", "range"},
		{"/debug/pprof/profile?seconds=1.5", "type"},
		{"/debug/pprof/profile?seconds=soon", "type"},
		{"/debug/pprof/profile?seconds=NaN", "type"},
		{"/debug/pprof/trace?seconds=3600", "range"},
		{"/debug/pprof/heap?seconds=1e9", "range"},
	} {
		b := ts.expectProblem(422, "VALIDATION_ERROR", "GET", tc.path, nil, APIKeyHeader, "adm")
		if len(b.Errors) != 1 || b.Errors[0].Field != "seconds" || b.Errors[0].Code != tc.code {
			t.Errorf("%s: problems %+v, want %s at seconds", tc.path, b.Errors, tc.code)
		}
	}
}
