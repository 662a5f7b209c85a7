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
