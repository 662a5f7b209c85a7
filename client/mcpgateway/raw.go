package mcpgateway

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrail-control/guard/internal/strictjson"
)

// The upstream's answers as it wrote them. The SDK decodes every result into its Go types, which drop what
// they do not know (a tool's "execution", a later version's fields) and add what they always write (a
// tool's annotations readOnlyHint and idempotentHint as false, a completion without hasMore). The client
// of the gateway must see what a direct client sees, so the gateway keeps the bytes of the answers it
// passes on: a request made with a context from withRawSlot has its response's result put in the slot by
// the upstream connection (rawConn), before the SDK hands the decoded result to the caller.

// The raw answers go to clients of the session protocol (before 2026-07-28), which the gateway speaks with
// the upstream too; a later version's results carry fields of their own (resultType, cache scopes) that the
// SDK's server session adds to the decoded result.

type rawWantedKey struct{}

// withRawWanted marks ctx as serving a client that gets the upstream's answers as they came.
func withRawWanted(ctx context.Context) context.Context {
	return context.WithValue(ctx, rawWantedKey{}, true)
}

func rawWanted(ctx context.Context) bool { v, _ := ctx.Value(rawWantedKey{}).(bool); return v }

// sessionProtocol reports whether req comes from a client session of the session protocol (it completed an
// initialize in a version before 2026-07-28).
func sessionProtocol(req mcp.Request) bool {
	ss, ok := req.GetSession().(*mcp.ServerSession)
	if !ok || ss == nil {
		return false
	}
	ip := ss.InitializeParams()
	return ip != nil && ip.ProtocolVersion != "" && ip.ProtocolVersion < newProtocolVersion
}

// rawSlot receives the result of one request as the upstream wrote it.
type rawSlot struct{ raw json.RawMessage }

type rawSlotKey struct{}

// withRawSlot returns ctx carrying a new slot for the result of the request made with it.
func withRawSlot(ctx context.Context) (context.Context, *rawSlot) {
	s := &rawSlot{}
	return context.WithValue(ctx, rawSlotKey{}, s), s
}

// rawTransport puts rawConn on the upstream's connection.
type rawTransport struct{ mcp.Transport }

// Connect implements mcp.Transport.
func (t rawTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &rawConn{Connection: c, pending: map[jsonrpc.ID]*rawSlot{}}, nil
}

// rawConn fills the slots of the requests written with one (see above).
type rawConn struct {
	mcp.Connection
	mu      sync.Mutex
	pending map[jsonrpc.ID]*rawSlot
}

// Write implements mcp.Connection.
func (c *rawConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		if s, ok := ctx.Value(rawSlotKey{}).(*rawSlot); ok {
			c.mu.Lock()
			c.pending[req.ID] = s
			c.mu.Unlock()
			err := c.Connection.Write(ctx, msg)
			if err != nil {
				c.mu.Lock()
				delete(c.pending, req.ID)
				c.mu.Unlock()
			}
			return err
		}
	}
	return c.Connection.Write(ctx, msg)
}

// Read implements mcp.Connection.
func (c *rawConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.mu.Lock()
		s := c.pending[resp.ID]
		delete(c.pending, resp.ID)
		c.mu.Unlock()
		if s != nil && resp.Error == nil {
			s.raw = resp.Result
		}
	}
	return msg, err
}

// rawResult is a result the client gets as the upstream wrote it.
type rawResult struct {
	mcp.Result
	raw json.RawMessage
}

// MarshalJSON implements json.Marshaler: the upstream's bytes.
func (r rawResult) MarshalJSON() ([]byte, error) { return r.raw, nil }

// asRaw is res, to be written as slot's bytes when the upstream's answer was taken.
func asRaw(res mcp.Result, slot *rawSlot) mcp.Result {
	if slot == nil || len(slot.raw) == 0 || !json.Valid(slot.raw) {
		return res
	}
	return rawResult{Result: res, raw: slot.raw}
}

// rawToolsPage is a page of the upstream's tools/list as it wrote it.
type rawToolsPage struct {
	Tools []json.RawMessage `json:"tools"`
}

// rawToolsOf returns the tools of a tools/list result by name, as the upstream wrote them.
func rawToolsOf(raw json.RawMessage, into map[string]json.RawMessage) {
	var page rawToolsPage
	if strictjson.UnmarshalLenient(raw, &page) != nil {
		return
	}
	for _, t := range page.Tools {
		var named struct {
			Name string `json:"name"`
		}
		if strictjson.UnmarshalLenient(t, &named) == nil && named.Name != "" {
			if _, dup := into[named.Name]; !dup {
				into[named.Name] = t
			}
		}
	}
}

// rawToolList is the gateway's tools/list result as the upstream wrote its own: each tool as the upstream
// wrote it, in the upstream's order, with the upstream's other fields (_meta) and none of the SDK's own
// (cacheScope); the gateway's page cursor, when its list has pages.
type rawToolList struct {
	*mcp.ListToolsResult
	tools map[string]json.RawMessage
	order map[string]int             // the upstream's order, by name
	extra map[string]json.RawMessage // the fields of the upstream's first page besides tools and nextCursor
}

// MarshalJSON implements json.Marshaler.
func (r rawToolList) MarshalJSON() ([]byte, error) {
	m := make(map[string]json.RawMessage, len(r.extra)+2)
	for k, v := range r.extra {
		m[k] = v
	}
	page := slices.Clone(r.ListToolsResult.Tools)
	slices.SortStableFunc(page, func(a, b *mcp.Tool) int { return r.order[a.Name] - r.order[b.Name] })
	tools := make([]json.RawMessage, 0, len(page))
	for _, t := range page {
		if raw, ok := r.tools[t.Name]; ok {
			tools = append(tools, raw)
			continue
		}
		tb, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		tools = append(tools, tb)
	}
	var err error
	if m["tools"], err = json.Marshal(tools); err != nil {
		return nil, err
	}
	if r.ListToolsResult.NextCursor != "" {
		if m["nextCursor"], err = json.Marshal(r.ListToolsResult.NextCursor); err != nil {
			return nil, err
		}
	}
	return json.Marshal(m)
}

// rawPageExtra returns the fields of a tools/list result besides tools and nextCursor.
func rawPageExtra(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if strictjson.UnmarshalLenient(raw, &m) != nil {
		return nil
	}
	delete(m, "tools")
	delete(m, "nextCursor")
	return m
}
