package mcpgateway

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestDecodeToolResultAsTheSDK: the relay's decoding of a result gives what the SDK's decoder gives, for
// the plain results it decodes itself and for the others it hands to the SDK.
func TestDecodeToolResultAsTheSDK(t *testing.T) {
	for _, raw := range []string{
		`{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`,
		`{"content":[{"type":"text","text":"x"}],"structuredContent":{"n":1,"l":[true,null,"s"]},"isError":true,"_meta":{"k":"v"}}`,
		`{"content":[]}`,
		`{"content":null}`,
		`{}`,
		`{"content":[{"type":"image","data":"AAE=","mimeType":"image/png"},{"type":"text","text":"t"}]}`,
		`{"content":[{"type":"text","text":"t","annotations":{"priority":0.5}}]}`,
		`{"content":[{"type":"text","text":"t","_meta":{"m":1}}]}`,
		`{"content":[{"type":"resource_link","uri":"file:///a","name":"a"}]}`,
		`{"content":[{"type":"text","text":"t"}],"resultType":"complete"}`,
		`{"content":[{"type":"text","text":"t"}],"unknownField":1}`,
	} {
		var want mcp.CallToolResult
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatalf("SDK: %s: %v", raw, err)
		}
		got, err := decodeToolResult(json.RawMessage(raw))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(&want)
		if string(g) != string(w) || got.NeedsInput() != want.NeedsInput() {
			t.Errorf("%s:\n got %s\nwant %s", raw, g, w)
		}
	}
	for _, bad := range []string{`{"content":[{"type":"nope"}]}`, `[1]`, `{"content":"x"}`} {
		if _, err := decodeToolResult(json.RawMessage(bad)); err == nil {
			t.Errorf("%s decoded without an error", bad)
		}
	}
}

// TestParseFastParams: the fast path takes plain calls only.
func TestParseFastParams(t *testing.T) {
	tests := []struct {
		raw  string
		take bool
	}{
		{`{"name":"echo","arguments":{"text":"hi"}}`, true},
		{`{"name":"echo"}`, true},
		{`{"name":"echo","arguments":{},"_meta":{"trace":"t"}}`, true},
		{`{"name":"echo","arguments":{},"_meta":{"progressToken":"p"}}`, false},
		{`{"name":"echo","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, false},
		{`{"name":"echo","arguments":null}`, false},
		{`{"name":"echo","arguments":[1]}`, false},
		{`{"name":"echo","arguments":{},"requestState":"s"}`, false},
		{`{"name":"echo","arguments":{},"inputResponses":{}}`, false},
		{`{"name":"echo","Arguments":{}}`, false},
		{`{"name":""}`, false},
		{`{"name":3}`, false},
		{`{"arguments":{}}`, false},
		{`null`, false},
		{`[]`, false},
	}
	for _, tc := range tests {
		p, ok := parseFastParams(json.RawMessage(tc.raw))
		if ok != tc.take {
			t.Errorf("%s: taken = %v, want %v", tc.raw, ok, tc.take)
		}
		if ok && p.name != "echo" {
			t.Errorf("%s: name %q", tc.raw, p.name)
		}
	}
}
