package mcpgateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The relay of tools/call to the upstream. The SDK's client session decodes each result through a streaming
// decoder with a 32 KiB buffer, which costs more than the rest of the gateway's work on a call. So the
// gateway writes a forwarded tools/call on the upstream's connection itself, under an ID of its own
// ("guard-N": the SDK numbers its requests, so the two never meet), takes the response off the
// connection before the SDK sees it, and decodes the result itself (fastdecode.go, else encoding/json).
// Everything else on the connection (the SDK's own requests, the upstream's notifications and requests) goes
// to the SDK as before.
//
// The relay is used for stream transports (a command, a pair of streams, an in-memory pipe) in a session
// of a protocol version before 2026-07-28 (whose requests carry per-request _meta the SDK fills in), for
// calls without inputResponses or requestState. Other calls go through the SDK's client session.

// relayPrefix starts the IDs of the requests the relay writes.
const relayPrefix = "guard-"

// relay is the gateway's side of the upstream connection.
type relay struct {
	conn mcp.Connection // set by Connect
	seq  atomic.Int64   // numbers the relay's requests: the count of calls relayed

	mu      sync.Mutex
	pending map[string]chan *jsonrpc.Response // by request ID, while the call waits
	ended   error                             // why the connection ended, once it has
}

// relayable reports whether the relay can carry calls over t (a stream transport; HTTP transports keep
// per-request state of their own).
func relayable(t mcp.Transport) bool {
	switch t.(type) {
	case *LineTransport, *CommandTransport, *mcp.CommandTransport, *mcp.IOTransport, *mcp.InMemoryTransport, *mcp.StdioTransport:
		return true
	}
	return false
}

// relayTransport wraps the upstream's transport so that the relay sits on its connection.
type relayTransport struct {
	mcp.Transport
	r *relay
}

// Connect implements mcp.Transport.
func (t *relayTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.r.conn = c
	rc := &relayConn{Connection: c, r: t.r}
	if lc, ok := c.(*lineConn); ok {
		lc.setLineTaker(rc.takeLine)
		lc.setInterceptor(rc.intercept)
	}
	return rc, nil
}

// relayConn is the upstream connection as the SDK's client session sees it: the relay's responses taken
// out.
type relayConn struct {
	mcp.Connection
	r *relay
}

// Read implements mcp.Connection.
func (c *relayConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			c.r.end(err)
			return nil, err
		}
		if !c.intercept(msg) {
			return msg, nil
		}
	}
}

// intercept takes the responses to the relay's requests (true) and hands them to their calls.
func (c *relayConn) intercept(msg jsonrpc.Message) bool {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		if id, ok := resp.ID.Raw().(string); ok && strings.HasPrefix(id, relayPrefix) {
			c.r.deliver(id, resp)
			return true
		}
	}
	return false
}

// takeLine is intercept for a line not yet decoded (see lineConn.setLineTaker): a plain successful
// response to the relay is decoded in one pass (parseRelayResponse); other lines go on to decodeMessage.
func (c *relayConn) takeLine(line []byte) bool {
	id, result, ok := parseRelayResponse(line)
	if !ok {
		return false
	}
	rid, err := jsonrpc.MakeID(id)
	if err != nil {
		return false
	}
	c.r.deliver(id, &jsonrpc.Response{ID: rid, Result: result})
	return true
}

// Close implements mcp.Connection: calls still waiting fail.
func (c *relayConn) Close() error {
	err := c.Connection.Close()
	c.r.end(mcp.ErrConnectionClosed)
	return err
}

// deliver hands a response to the call waiting for it (a call that gave up has left: the answer is dropped).
func (r *relay) deliver(id string, resp *jsonrpc.Response) {
	r.mu.Lock()
	ch := r.pending[id]
	delete(r.pending, id)
	r.mu.Unlock()
	if ch != nil {
		ch <- resp
	}
}

// end fails the calls waiting, and every later one, with err.
func (r *relay) end(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended == nil {
		r.ended = err
	}
	for id, ch := range r.pending {
		ch <- &jsonrpc.Response{Error: r.ended}
		delete(r.pending, id)
	}
}

// forwardCall sends a checked tools/call to the upstream: through the relay when it can carry it, else
// through the SDK's client session. Errors are those of mcp.ClientSession.CallTool: the upstream's
// JSON-RPC error wrapped, mcp.ErrConnectionClosed wrapped when the connection ended, ctx's error when ctx
// ended first (the upstream is then told the request is cancelled). raw is the result as the upstream
// sent it when the client may be given those bytes instead of res re-encoded (see decodePlainResult).
func (g *Gateway) forwardCall(ctx context.Context, p *mcp.CallToolParams) (res *mcp.CallToolResult, raw []byte, err error) {
	r := g.relay
	if r == nil || len(p.InputResponses) > 0 || p.RequestState != "" {
		res, err = g.up.CallTool(ctx, p)
		return res, nil, err
	}
	if p.Arguments == nil {
		p.Arguments = map[string]any{} // as the SDK sends it
	}
	seq := r.seq.Add(1)
	id := relayPrefix + strconv.FormatInt(seq, 10)
	line, err := callLine(seq, p)
	if err != nil {
		return nil, nil, fmt.Errorf("calling %q: %w", "tools/call", err)
	}
	rid, _ := jsonrpc.MakeID(id) // a string is always an ID
	ch := make(chan *jsonrpc.Response, 1)
	r.mu.Lock()
	if r.ended != nil {
		err := r.ended
		r.mu.Unlock()
		return nil, nil, fmt.Errorf("%w: calling %q: %v", mcp.ErrConnectionClosed, "tools/call", err)
	}
	if r.pending == nil {
		r.pending = map[string]chan *jsonrpc.Response{}
	}
	r.pending[id] = ch
	r.mu.Unlock()
	if lc, ok := r.conn.(*lineConn); ok {
		err = ctx.Err()
		if err == nil {
			err = lc.writeLine(line)
		}
	} else {
		err = r.conn.Write(ctx, &jsonrpc.Request{ID: rid, Method: "tools/call", Params: line[len(callLinePrefix(seq)) : len(line)-2]})
	}
	if err != nil {
		r.deliver(id, nil) // forget the call
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, fmt.Errorf("%w: calling %q: %v", mcp.ErrConnectionClosed, "tools/call", err)
	}
	select {
	case resp := <-ch:
		return relayResult(resp)
	case <-ctx.Done():
		r.deliver(id, nil)
		// As the SDK does, the upstream is told; the notification is written before the call returns (a
		// pipe takes it at once), so that nothing outlives the call.
		ncancel, err := json.Marshal(&mcp.CancelledParams{RequestID: id, Reason: ctx.Err().Error()})
		if err == nil {
			_ = r.conn.Write(context.WithoutCancel(ctx), &jsonrpc.Request{Method: "notifications/cancelled", Params: ncancel})
		}
		return nil, nil, ctx.Err()
	}
}

// callLinePrefix is the start of the line of the relay's request number seq, up to its parameters.
func callLinePrefix(seq int64) string {
	return `{"jsonrpc":"2.0","id":"` + relayPrefix + strconv.FormatInt(seq, 10) + `","method":"tools/call","params":`
}

// callLine is the line of the relay's tools/call number seq, "\n" included. The parameters are encoded as
// json.Marshal encodes p, except that arguments already encoded (as the client sent them, which its
// decoding validated, or as the gateway redacted them) are copied rather than compacted again, unless
// they hold a line break (as whitespace between their tokens, from a client over HTTP).
func callLine(seq int64, p *mcp.CallToolParams) ([]byte, error) {
	b := []byte(callLinePrefix(seq))
	if args, ok := p.Arguments.(json.RawMessage); ok && p.Meta == nil && len(args) > 0 && !bytes.ContainsAny(args, "\r\n") {
		name, err := json.Marshal(p.Name)
		if err != nil {
			return nil, err
		}
		b = append(b, `{"name":`...)
		b = append(b, name...)
		b = append(b, `,"arguments":`...)
		b = append(b, args...)
		b = append(b, '}')
	} else {
		params, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		b = append(b, params...)
	}
	return append(b, "}\n"...), nil
}

// relayResult turns the upstream's response into the result or the error CallTool would return, and
// the result's bytes when the client may be given them as they are (see decodePlainResult).
func relayResult(resp *jsonrpc.Response) (*mcp.CallToolResult, []byte, error) {
	if resp.Error != nil {
		var je *jsonrpc.Error
		if errors.As(resp.Error, &je) && resp.ID.IsValid() {
			return nil, nil, fmt.Errorf("calling %q: %w", "tools/call", je)
		}
		return nil, nil, fmt.Errorf("%w: calling %q: %v", mcp.ErrConnectionClosed, "tools/call", resp.Error)
	}
	if res, verbatim, ok := decodePlainResult(resp.Result); ok {
		if verbatim {
			return res, resp.Result, nil
		}
		return res, nil, nil
	}
	res, err := decodeToolResult(resp.Result)
	if err != nil {
		return nil, nil, fmt.Errorf("calling %q: %w", "tools/call", err)
	}
	return res, nil, nil
}

// plainResult is a tool result with text content only: what decodeToolResult decodes itself.
type plainResult struct {
	Meta    mcp.Meta `json:"_meta"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent any  `json:"structuredContent"`
	IsError           bool `json:"isError"`
}

// decodeToolResult decodes a tools/call result. A result of text blocks (each with only a type and a
// text), structured content, _meta and isError is decoded with encoding/json; any other (images,
// resources, annotations, fields of later versions) with the SDK's own decoder.
func decodeToolResult(raw json.RawMessage) (*mcp.CallToolResult, error) {
	var p plainResult
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err == nil && !dec.More() && plainText(&p) {
		res := &mcp.CallToolResult{Meta: p.Meta, StructuredContent: p.StructuredContent, IsError: p.IsError,
			Content: make([]mcp.Content, len(p.Content))} // never nil, as the SDK decodes it
		for i, c := range p.Content {
			res.Content[i] = &mcp.TextContent{Text: c.Text}
		}
		return res, nil
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

func plainText(p *plainResult) bool {
	for _, c := range p.Content {
		if c.Type != "text" {
			return false
		}
	}
	return true
}
