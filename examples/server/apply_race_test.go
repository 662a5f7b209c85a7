package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server"
	"github.com/guardrail-control/guard/store/storetest"
)

// Two applies at once: another writer changes a control between apply's read and its write. Apply's write
// carries If-Match with the version it read, so the server refuses it (412) and apply stops with a message
// instead of overwriting the other change.
func TestApplyRefusesAStaleWrite(t *testing.T) {
	st := storetest.SQLite(t)
	srv, err := server.New(st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ctx := context.Background()
	old, err := guard.ParseControlData([]byte(`{"condition": {"selector": {"path": "input"}, "evaluator": {"name": "regex", "config": {"pattern": "old"}}}, "action": {"decision": "deny"}}`))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := st.CreateControl(ctx, "block-ssn", &old)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := guard.ParseControlData([]byte(`{"condition": {"selector": {"path": "input"}, "evaluator": {"name": "regex", "config": {"pattern": "the-other-writer"}}}, "action": {"decision": "deny"}}`))

	var once sync.Once
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/data") {
			once.Do(func() {
				// The other writer wins the race.
				if _, err := st.PutControlData(r.Context(), rec.ID, other); err != nil {
					t.Error(err)
				}
			})
		}
		srv.ServeHTTP(w, r)
	}))
	defer hs.Close()

	policy := writePolicyFile(t, t.TempDir(), "p.yaml", `controls:
  - name: block-ssn
    data:
      condition: {selector: {path: input}, evaluator: {name: regex, config: {pattern: 'mine'}}}
      action: {decision: deny}
`)
	code, stdout, stderr := runPolicyCmd(t, map[string]string{"GUARD_URL": hs.URL}, "apply", "-f", policy)
	if code != 1 || !strings.Contains(stderr, "control block-ssn changed on the server since apply read it (version 1); it was not overwritten") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	got, err := st.GetControl(ctx, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Data.Condition.Evaluator.Config["pattern"] != "the-other-writer" || got.Version != 2 {
		t.Fatalf("the other writer's change was lost: version %d, %v", got.Version, got.Data.Condition.Evaluator.Config)
	}
	// Run again: the plan is computed from the new state and applies.
	if code, stdout, stderr := runPolicyCmd(t, map[string]string{"GUARD_URL": hs.URL}, "apply", "-f", policy); code != 0 || !strings.Contains(stdout, "updated control block-ssn (version 3)") {
		t.Fatalf("second apply: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
