package ui_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// TestAgentPageShowsTheSDK: the agent page shows the client library the agent last named itself with
// (the reference SDKs' X-Agent-Control-SDK headers), and a dash for an agent whose SDK never did.
func TestAgentPageShowsTheSDK(t *testing.T) {
	a := startApp(t, appOptions{})
	a.initAgent("plain-bot", "")
	req, err := http.NewRequest("POST", a.url+"/api/v1/agents/initAgent",
		bytes.NewReader([]byte(`{"agent":{"agent_name":"sdk-bot","agent_version":"1"},"steps":[{"type":"llm","name":"chat"}]}`)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Agent-Control-SDK", "python")
	req.Header.Set("X-Agent-Control-SDK-Version", "8.4.0")
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("initAgent with SDK headers: %v %v", err, res)
	}
	res.Body.Close()

	a.open("#/agents/sdk-bot")
	if got := a.text("#agent-sdk"); !strings.HasPrefix(got, "python 8.4.0 (last seen ") {
		t.Fatalf("SDK shown as %q", got)
	}
	a.goTo("#/agents/plain-bot")
	if got := a.text("#agent-sdk"); got != "—" {
		t.Fatalf("an agent without SDK headers: %q", got)
	}
	a.noPageErrors()
}
