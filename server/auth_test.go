package server

import (
	"context"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/server/observability"
	"github.com/guardrail-control/guard/server/problem"
	"github.com/guardrail-control/guard/store/storetest"
)

func TestAuthRefusesNoKeys(t *testing.T) {
	ts := newTS(t)
	_, err := New(ts.st, WithAuth(true, nil, []string{""}))
	if err == nil || !strings.Contains(err.Error(), "GUARD_API_KEYS") {
		t.Fatalf("want a clear error, got %v", err)
	}
}

// TestAuthTable runs every route with no key, a bad key, a regular key and an admin key.
func TestAuthTable(t *testing.T) {
	m, err := observability.NewMetrics("guard")
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.SQLite(t)
	rec := observability.NewRecorder(st, observability.RecorderConfig{Metrics: m})
	t.Cleanup(func() { _ = rec.Close(context.Background()) })
	ts := newTSOn(t, st, WithAuth(true, []string{"reg-1", "reg-2"}, []string{"adm-1"}), WithMetrics(m), WithObservability(true, rec))
	keys := []struct {
		name, key string
	}{{"none", ""}, {"bad", "nope"}, {"regular", "reg-2"}, {"admin", "adm-1"}}
	for _, rt := range ts.srv.routes() {
		path := strings.NewReplacer("{agent_name}", "a1", "{control_id}", "1", "{version}", "1", "{template_name}", "us-ssn", "{$}", "").Replace(rt.path)
		for _, k := range keys {
			var hdr []string
			if k.key != "" {
				hdr = []string{APIKeyHeader, k.key}
			}
			var body any
			if rt.method != "GET" {
				body = "{}"
			}
			r := ts.do(rt.method, path, body, hdr...)
			if r.Header.Get(VersionHeader) == "" {
				t.Errorf("%s %s: no version header", rt.method, path)
			}
			if r.Code >= 500 {
				t.Errorf("%s %s (%s): %d %s", rt.method, path, k.name, r.Code, r.Body)
			}
			var want string
			switch {
			case rt.level == levelPublic:
			case k.name == "none":
				want = problem.CodeAuthMissingKey
			case k.name == "bad":
				want = problem.CodeAuthInvalidKey
			case k.name == "regular" && (rt.level == levelAdmin || rt.level == levelApprove):
				want = problem.CodeAuthInsufficient
			}
			if want == "" {
				if r.Code == 401 || r.Code == 403 {
					t.Errorf("%s %s (%s key): %d, want access", rt.method, path, k.name, r.Code)
				}
				continue
			}
			b := r.problem(t)
			if b.ErrorCode != want {
				t.Errorf("%s %s (%s key): %d %s, want %s", rt.method, path, k.name, r.Code, b.ErrorCode, want)
			}
			if r.Code == 401 && r.Header.Get("WWW-Authenticate") != "ApiKey" {
				t.Errorf("%s %s: 401 without WWW-Authenticate", rt.method, path)
			}
		}
	}
}

func TestAuthLevels(t *testing.T) {
	// The contract's table, spelled out for the routes that are easy to get wrong.
	ts := newTS(t, WithAuth(true, []string{"r"}, []string{"a"}))
	want := map[string]level{
		"POST /api/v1/agents/initAgent":                                 levelRuntime,
		"POST /api/v1/evaluation":                                       levelRuntime,
		"PATCH /api/v1/agents/{agent_name}":                             levelAdmin,
		"POST /api/v1/controls/validate":                                levelAdmin,
		"POST /api/v1/controls/test":                                    levelAdmin,
		"POST /api/v1/controls/try":                                     levelAdmin,
		"POST /api/v1/controls/{control_id}/versions/{version}/restore": levelAdmin,
		"POST /api/v1/agents/{agent_name}/controls/{control_id}":        levelAdmin,
		"GET /api/v1/controls/{control_id}/data":                        levelRuntime,
		"GET /health":                                                   levelPublic,
		"GET /ready":                                                    levelPublic,
		"GET /openapi.json":                                             levelPublic,
		"GET /docs":                                                     levelPublic,
		"POST /api/v1/steps/captured":                                   levelRuntime,
		"GET /api/v1/steps/captured":                                    levelAdmin,
		"POST /api/v1/controls/replay":                                  levelAdmin,
		"GET /api/v1/controls/replay/jobs/{job_id}":                     levelAdmin,
		"GET /api/v1/control-templates":                                 levelRuntime,
		"GET /api/v1/control-templates/{template_name}":                 levelRuntime,
		"POST /api/v1/control-templates/{template_name}/render":         levelAdmin,
		"POST /api/v1/approvals/{approval_id}":                          levelApprove,
		"GET /api/v1/keys":                                              levelAdmin,
		"POST /api/v1/keys":                                             levelAdmin,
		"GET /api/v1/keys/{key_name}":                                   levelAdmin,
		"POST /api/v1/keys/{key_name}/rotate":                           levelAdmin,
		"DELETE /api/v1/keys/{key_name}":                                levelAdmin,
	}
	// A replay job's result holds captured step content (samples), and so do the captured steps read back:
	// both are read with the admin key, the only GETs under /api/v1 that are not at the runtime level.
	// The API keys are read with the admin key too: their names, roles and reach are the deployment's map.
	adminGets := map[string]bool{"GET /api/v1/controls/replay/jobs/{job_id}": true, "GET /api/v1/steps/captured": true,
		"GET /api/v1/keys": true, "GET /api/v1/keys/{key_name}": true}
	got := map[string]level{}
	for _, rt := range ts.srv.routes() {
		got[rt.pattern()] = rt.level
		if strings.HasPrefix(rt.path, "/api/v1/") && rt.method == "GET" && rt.level != levelRuntime && !adminGets[rt.pattern()] {
			t.Errorf("%s: GET under /api/v1 must be runtime", rt.pattern())
		}
	}
	for p, l := range want {
		if got[p] != l {
			t.Errorf("%s: level %v, want %v", p, got[p], l)
		}
	}
}
