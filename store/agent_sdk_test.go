package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

// TestAgentSDKLastSeen: the last SDK name and version recorded for an agent win, survive a reopen of the
// database, are kept per normalised agent name, and are bounded.
func TestAgentSDKLastSeen(t *testing.T) {
	storetest.EachURL(t, func(t *testing.T, url string) {
		ctx := ctxT(t)
		s := openMigrated(t, url)
		if _, ok, err := s.AgentSDK(ctx, "sdk-agent-1"); err != nil || ok {
			t.Fatalf("nothing recorded: %v %v", ok, err)
		}
		t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
		for i, tc := range []struct{ sdk, version string }{{"python", "8.4.0"}, {"typescript", "3.1.0"}} {
			if err := s.RecordAgentSDK(ctx, "SDK-Agent-1", tc.sdk, tc.version, t0.Add(time.Duration(i)*time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.RecordAgentSDK(ctx, "sdk-agent-2", strings.Repeat("x", 500), "1", t0); err != nil {
			t.Fatal(err)
		}
		s.Close()
		s = openMigrated(t, url) // a restart
		got, ok, err := s.AgentSDK(ctx, "sdk-agent-1")
		if err != nil || !ok || got.SDK != "typescript" || got.Version != "3.1.0" || !got.SeenAt.Equal(t0.Add(time.Minute)) {
			t.Fatalf("last seen: %+v %v %v", got, ok, err)
		}
		if got, _, _ := s.AgentSDK(ctx, "sdk-agent-2"); len(got.SDK) != 64 {
			t.Fatalf("a 500-byte name kept as %d bytes, want 64", len(got.SDK))
		}
		if err := s.RecordAgentSDK(ctx, "not a valid name!", "python", "1", t0); err != nil {
			t.Fatalf("an invalid agent name: %v, want it ignored", err)
		}
	})
}

// openMigrated opens the database at url, migrated, and closes it at the end of the test.
func openMigrated(t *testing.T, url string) *store.Store {
	t.Helper()
	s, err := store.OpenAndMigrate(ctxT(t), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
