package mcpgateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/guardrail-control/guard/client/mcpgateway"
)

// rawClient is a client of the gateway that writes and reads JSON-RPC lines itself, to send what the
// SDK's client never sends (IDs of every kind, odd spacing).
type rawClient struct {
	t  *testing.T
	w  *os.File
	rd *bufio.Reader
}

func (c *rawClient) send(line string) {
	c.t.Helper()
	if _, err := c.w.WriteString(line + "\n"); err != nil {
		c.t.Fatal(err)
	}
}

// recv is the next line from the gateway, decoded.
func (c *rawClient) recv() map[string]any {
	c.t.Helper()
	line, err := c.rd.ReadString('\n')
	if err != nil {
		c.t.Fatalf("reading the gateway's answer: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		c.t.Fatalf("%q: %v", line, err)
	}
	return m
}

// newRawRig is a gateway served with Run over OS pipes, in front of the test upstream, with a raw
// client that has completed the initialize handshake in protocol version 2025-11-25.
func newRawRig(t *testing.T) (*rig, *rawClient) {
	t.Helper()
	ctx := context.Background()
	r := &rig{up: newUpstream(), guard: &fakeGuard{record: true}}
	gt, ut := pipeTransports(t, "line")
	var err error
	if r.upSess, err = r.up.srv.Connect(ctx, ut, nil); err != nil {
		t.Fatal(err)
	}
	if r.gw, err = mcpgateway.Connect(ctx, gt, mcpgateway.Options{}); err != nil {
		t.Fatal(err)
	}
	r.gw.Server(r.guard)
	cr, gw, err := os.Pipe() // the client reads what the gateway writes
	if err != nil {
		t.Fatal(err)
	}
	gr, cw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- r.gw.Run(ctx, &mcpgateway.LineTransport{Reader: gr, Writer: gw}) }()
	c := &rawClient{t: t, w: cw, rd: bufio.NewReaderSize(cr, 1<<20)}
	t.Cleanup(func() {
		_ = cw.Close()
		select {
		case <-ran:
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after the client closed its side")
		}
		_ = cr.Close()
		_ = r.gw.Close()
		_ = r.upSess.Close()
	})
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := c.recv(); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return r, c
}

// TestFastPathWire: tools/call lines with IDs of every kind, odd spacing and big or unusual results are
// decoded in one pass and answered under the ID the SDK would answer with; plain text results go to the
// client as the upstream wrote them, the others re-encoded, with the same meaning.
func TestFastPathWire(t *testing.T) {
	r, c := newRawRig(t)
	big := strings.Repeat("0123456789", 20000) // longer than the line reader's buffer
	echo := func(text string) string {
		return canon(map[string]any{"content": []any{
			map[string]any{"type": "text", "text": "echo: " + text}, map[string]any{"type": "text", "text": "second block"}}})
	}
	tests := []struct {
		line     string
		id       string // the ID of the answer, as JSON
		result   string // its result, canonical JSON
		verbatim bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}`, `1`, echo("a"), true},
		{`{"jsonrpc":"2.0","id":"s-1","method":"tools/call","params":{"name":"echo","arguments":{"text":"b"}}}`, `"s-1"`, echo("b"), true},
		{`{"jsonrpc":"2.0","id":"\u003c\u0026\u003e\u00e9","method":"tools/call","params":{"name":"echo","arguments":{"text":"c"}}}`, `"<&>é"`, echo("c"), true},
		{`{"jsonrpc":"2.0","id":-5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"d"}}}`, `-5`, echo("d"), true},
		{`{"jsonrpc":"2.0","id":1e2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"e"}}}`, `100`, echo("e"), true},
		{`{"jsonrpc":"2.0","id":2.5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"f"}}}`, `2`, echo("f"), true},
		{`{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"echo","arguments":{"text":"g"}}}`, `9007199254740992`, echo("g"), true},
		{` {"params" : {"arguments" : {"text" : "h"} , "name" : "echo"} , "method" : "tools/call" , "id" : 3 , "jsonrpc" : "2.0"} `, `3`, echo("h"), true},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + big + `"}}}`, `4`, echo(big), true},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"<b>\"q\"\n\t\u0001 é 😀"}}}`, `5`, echo("<b>\"q\"\n\t\u0001 é 😀"), false},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{"text":"\u2028"}}}`, `6`, echo("\u2028"), false},
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"sum","arguments":{"A":2,"B":3}}}`, `7`,
			canon(map[string]any{"content": []any{map[string]any{"type": "text", "text": `{"sum":5}`}}, "structuredContent": map[string]any{"sum": 5}}), false},
		{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"fails"}}`, `8`,
			canon(map[string]any{"content": []any{map[string]any{"type": "text", "text": "disk full"}}, "isError": true}), true},
	}
	var verbatim int64
	for i, tc := range tests {
		c.send(tc.line)
		m := c.recv()
		var wantID any
		if err := json.Unmarshal([]byte(tc.id), &wantID); err != nil {
			t.Fatal(err)
		}
		if id := canon(m["id"]); id != canon(wantID) || m["jsonrpc"] != "2.0" {
			t.Fatalf("%s: answered %v, want id %s", tc.line[:min(len(tc.line), 80)], m, tc.id)
		}
		if got := canon(m["result"]); got != tc.result {
			t.Fatalf("%s:\n got %.200s\nwant %.200s", tc.line[:min(len(tc.line), 80)], got, tc.result)
		}
		if tc.verbatim {
			verbatim++
		}
		decoded, v := mcpgateway.OnePassCalls(r.gw)
		if decoded != int64(i+1) || v != verbatim {
			t.Fatalf("%s: %d calls decoded in one pass, %d verbatim; want %d, %d", tc.line[:min(len(tc.line), 80)], decoded, v, i+1, verbatim)
		}
	}
	if n := mcpgateway.FastCalls(r.gw); n != int64(len(tests)) {
		t.Fatalf("%d fast calls, want %d", n, len(tests))
	}
}
