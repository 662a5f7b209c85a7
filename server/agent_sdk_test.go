package server

import (
	"testing"
	"time"
)

// TestAgentSDKRecorded: the SDK headers of a registration and of a refresh of the agent's controls are
// kept per agent, the last seen winning, and GET /agents/{name} shows them (null before any); a new
// server on the same database still shows them. Requests without the headers change nothing.
func TestAgentSDKRecorded(t *testing.T) {
	ts := newTS(t)
	ts.initAgent("sdk-agent")
	if sdk := ts.ok(200, "GET", "/api/v1/agents/sdk-agent", nil)["sdk"]; sdk != nil {
		t.Fatalf("no SDK named itself, yet sdk = %v", sdk)
	}
	for _, tc := range []struct {
		method, path string
		body         any
		name, ver    string
	}{
		{"POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": "sdk-agent"}}, "python", "8.4.0"},
		{"GET", "/api/v1/agents/sdk-agent/controls", nil, "typescript", "3.1.0"},
		{"GET", "/api/v1/agents/sdk-agent/controls", nil, "", ""}, // no headers: the last pair stays
	} {
		var hdr []string
		if tc.name != "" {
			hdr = []string{sdkHeader, tc.name, sdkVersionHeader, tc.ver}
		}
		ts.ok(200, tc.method, tc.path, tc.body, hdr...)
	}
	check := func(ts *tserver, what string) {
		t.Helper()
		sdk, _ := ts.ok(200, "GET", "/api/v1/agents/sdk-agent", nil)["sdk"].(map[string]any)
		seen, _ := time.Parse(time.RFC3339Nano, sdk["seen_at"].(string))
		if sdk["name"] != "typescript" || sdk["version"] != "3.1.0" || time.Since(seen) > time.Hour {
			t.Fatalf("%s: sdk = %v, want the last seen typescript 3.1.0", what, sdk)
		}
	}
	check(ts, "same server")
	check(newTSOn(t, ts.st), "a new server on the database")
}
