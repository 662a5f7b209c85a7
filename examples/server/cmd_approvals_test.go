package main

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/server"
	"github.com/guardrail-control/guard/store/storetest"
)

// TestApprovalsDecideNamesTheKeysThatMay (issue 32, item 9): approve or reject with a key that may not
// decide says which keys may: an admin key or a key with the approve permission.
func TestApprovalsDecideNamesTheKeysThatMay(t *testing.T) {
	srv, err := server.New(storetest.SQLite(t), server.WithAuth(true, []string{"runtime-key"}, []string{"admin-key"}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	for _, tc := range []struct {
		name, key string
		want      string
	}{
		{"a runtime key", "runtime-key", "may not decide approval requests"},
		{"no key", "", "requires an API key to decide"},
		{"an unknown key", "nope", "does not accept the key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"GUARD_URL": hs.URL}
			if tc.key != "" {
				env["GUARD_API_KEY"] = tc.key
			}
			for _, verb := range []string{"approve", "reject"} {
				code, stdout, stderr := runPolicyCmd(t, env, "approvals", verb, "6f1c0000-0000-0000-0000-000000000000")
				if code != 1 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "an admin key") ||
					!strings.Contains(stderr, "a key with the approve permission") {
					t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", verb, code, stdout, stderr)
				}
			}
		})
	}
}
