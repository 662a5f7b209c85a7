package mcpgateway_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrail-control/guard/client/mcpgateway"
)

// editTransport rewrites the results of the responses its connection writes (the upstream's side), and
// keeps the last result it reads (the client's side).
type editTransport struct {
	mcp.Transport
	edit func(json.RawMessage) json.RawMessage

	mu   sync.Mutex
	read []json.RawMessage
}

func (t *editTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	return &editConn{Connection: c, t: t}, err
}

type editConn struct {
	mcp.Connection
	t *editTransport
}

func (c *editConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok && c.t.edit != nil && resp.Error == nil {
		cp := *resp
		cp.Result = c.t.edit(resp.Result)
		msg = &cp
	}
	return c.Connection.Write(ctx, msg)
}

func (c *editConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.t.mu.Lock()
		c.t.read = append(c.t.read, resp.Result)
		c.t.mu.Unlock()
	}
	return msg, err
}

// TestToolListAsUpstreamWrote: the client gets the upstream's tools as it wrote them: fields the SDK does not
// know (execution), annotations without the SDK's defaults, the upstream's order and _meta, nothing added.
func TestToolListAsUpstreamWrote(t *testing.T) {
	ctx := context.Background()
	u := newUpstream()
	// The upstream's tools/list as a server of another SDK writes it.
	upT := &editTransport{edit: func(res json.RawMessage) json.RawMessage {
		if !strings.Contains(string(res), `"tools":[`) {
			return res
		}
		var m map[string]any
		_ = json.Unmarshal(res, &m)
		tools := m["tools"].([]any)
		for _, t := range tools {
			tm := t.(map[string]any)
			tm["execution"] = map[string]any{"taskSupport": "optional"}
			tm["annotations"] = map[string]any{"destructiveHint": false}
		}
		// reverse the SDK's alphabetical order: the gateway keeps the upstream's
		for i, j := 0, len(tools)-1; i < j; i, j = i+1, j-1 {
			tools[i], tools[j] = tools[j], tools[i]
		}
		m["_meta"] = map[string]any{"vendor/x": 1}
		delete(m, "cacheScope")
		b, _ := json.Marshal(m)
		return b
	}}
	t1, t2 := mcp.NewInMemoryTransports()
	upT.Transport = t2
	upSess, err := u.srv.Connect(ctx, upT, nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := mcpgateway.Connect(ctx, t1, mcpgateway.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := gw.Server(&fakeGuard{})
	c1, c2 := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, c2, nil)
	if err != nil {
		t.Fatal(err)
	}
	clT := &editTransport{Transport: c1}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, clT, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
		_ = gw.Close()
		_ = upSess.Close()
	})
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	clT.mu.Lock()
	got := clT.read[len(clT.read)-1]
	clT.mu.Unlock()
	var page struct {
		Tools []map[string]any `json:"tools"`
		Meta  map[string]any   `json:"_meta"`
	}
	if err := json.Unmarshal(got, &page); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range page.Tools {
		names = append(names, tl["name"].(string))
		if canon(tl["execution"]) != `{"taskSupport":"optional"}` || canon(tl["annotations"]) != `{"destructiveHint":false}` {
			t.Errorf("tool %s as the client got it: %s", tl["name"], canon(tl))
		}
	}
	if strings.Join(names, ",") != "sum,slow,progress,fails,echo" {
		t.Errorf("order %v, want the upstream's", names)
	}
	if canon(page.Meta) != `{"vendor/x":1}` || strings.Contains(string(got), "cacheScope") {
		t.Errorf("page %s: want the upstream's _meta and nothing the SDK adds", got)
	}
}
