package mcpgateway

import (
	"encoding/json"
	"errors"
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

// TestRelayForget: a call that gives up leaves its channel empty, whether its reply was still to come
// (dropped when it comes) or already on its way (drained), so that the reused channel never hands a call
// the reply of an earlier one.
func TestRelayForget(t *testing.T) {
	r := &relay{pending: map[int64]chan relayReply{}}
	ch := make(chan relayReply, 1)

	r.pending[1] = ch
	r.forget(1, ch) // still waiting: taken out, nothing to drain
	r.deliver(1, relayReply{result: []byte(`{"late":1}`)})
	if len(ch) != 0 || len(r.pending) != 0 {
		t.Fatalf("after a late reply: %d in the channel, %d pending", len(ch), len(r.pending))
	}

	r.pending[2] = ch
	r.deliver(2, relayReply{result: []byte(`{"n":2}`)}) // the reply came as the call gave up
	r.forget(2, ch)
	if len(ch) != 0 {
		t.Fatal("the reply of a call that gave up is left in its channel")
	}

	r.pending[3] = ch
	r.deliver(3, relayReply{result: []byte(`{"n":3}`)})
	if rep := <-ch; string(rep.result) != `{"n":3}` {
		t.Fatalf("call 3 got %s", rep.result)
	}

	r.pending[4] = ch
	r.end(errors.New("gone"))
	r.forget(4, ch) // end sent the error first: drained
	if len(ch) != 0 || r.ended == nil {
		t.Fatal("end left a reply behind")
	}
}
