package llmproxy_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/llmproxy/fakellm"
)

// TestNodeClients drives the official npm clients (openai, @anthropic-ai/sdk; installed by
// .ci/llm-clients.sh into $GUARD_TEST_LLM_CLIENTS) through the proxy: allow, deny at each step kind,
// steer, redaction both ways, a blocked stream, a tool call denied before the agent runs it, an injected
// tool result blocked before the model reads it. Without GUARD_TEST_LLM_CLIENTS it skips (CI sets it).
func TestNodeClients(t *testing.T) {
	dir := os.Getenv("GUARD_TEST_LLM_CLIENTS")
	if dir == "" && os.Getenv("CI") == "true" {
		t.Fatal("GUARD_TEST_LLM_CLIENTS is not set: CI installs the clients with .ci/llm-clients.sh")
	}
	if dir == "" {
		t.Skip("GUARD_TEST_LLM_CLIENTS is not set (source .ci/llm-clients.sh)")
	}
	rg := newRig(t, nil)
	long := strings.Repeat("All is well here. ", 150) // 2,700 bytes: several windows
	rg.fake.Script(func(r *fakellm.Request) fakellm.Reply {
		switch r.Header.Get("X-Scenario") {
		case "key":
			return fakellm.Reply{Text: "your key is sk-abcdefghij0123456789"}
		case "refund":
			return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "call_r", Name: "refund", Arguments: `{"currency":"USD"}`}}}
		case "long":
			return fakellm.Reply{Text: long, Chunk: 7}
		case "forbidden":
			return fakellm.Reply{Text: long + "FORBIDDEN" + long, Chunk: 7}
		case "delete":
			return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "call_d", Name: "delete_file", Arguments: `{"path":"/etc/passwd"}`}}, Chunk: 4}
		}
		return fakellm.Reply{Text: "hello from the model"}
	})
	cmd := exec.Command("node", "testdata/clients.cjs")
	cmd.Env = append(os.Environ(), "PROXY_URL="+rg.proxy.URL, "GUARD_TEST_LLM_CLIENTS="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	type result struct {
		Scenario string `json:"scenario"`
		OK       bool   `json:"ok"`
		Text     string `json:"text"`
		Status   *int   `json:"status"`
		Code     any    `json:"code"`
		Message  string `json:"message"`
	}
	got := map[string]result{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		got[r.Scenario] = r
	}
	ok := func(name, text string) {
		r := got[name]
		if !r.OK || r.Text != text {
			t.Errorf("%s: %+v, want the answer %.40q", name, r, text)
		}
	}
	refused := func(name string, status int, code string) {
		r := got[name]
		if r.OK || r.Status == nil || *r.Status != status || r.Code != code {
			t.Errorf("%s: %+v, want %d %s", name, r, status, code)
		}
	}
	streamRefused := func(name, word string) {
		r := got[name]
		if r.OK || !strings.Contains(r.Message, word) && r.Code != word {
			t.Errorf("%s: %+v, want the stream to raise guard's error (%s)", name, r, word)
		}
	}
	ok("openai allow", "hello from the model")
	refused("openai deny request", 403, "guard_denied")
	ok("openai redact both ways", "your key is [KEY]")
	refused("openai steer", 422, "guard_steer")
	refused("openai injected tool result", 403, "guard_denied")
	ok("openai stream allow", long)
	streamRefused("openai stream blocked", "guard_denied")
	streamRefused("openai stream tool call denied", "delete_file")
	ok("anthropic allow", "hello from the model")
	refused("anthropic deny request", 403, "guard_denied")
	ok("anthropic stream allow", long)
	streamRefused("anthropic stream tool call denied", "delete_file")
	// The request's email was redacted before the upstream saw it.
	seen := false
	for _, r := range rg.fake.Requests() {
		if r.Header.Get("X-Scenario") == "key" {
			b, _ := json.Marshal(r.Body)
			seen = strings.Contains(string(b), "mail [EMAIL]") && !strings.Contains(string(b), "bob@")
		}
	}
	if !seen {
		t.Error("the request of the redaction scenario reached the upstream unredacted")
	}
	if len(got) != 12 {
		t.Errorf("%d scenarios ran, want 12:\n%s\n%s", len(got), out, stderr.String())
	}
}
