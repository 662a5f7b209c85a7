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

	"github.com/guardrail-control/guard/internal/strictjson"
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
	pending map[int64]chan relayReply // by request number, while the call waits
	ended   error                     // why the connection ended, once it has
}

// relayReply is what a relayed call gets: the result of a plain successful response (taken in one pass),
// the response decoded (resp), or why the connection ended (err).
type relayReply struct {
	result []byte
	resp   *jsonrpc.Response
	err    error
}

// replyChans are the channels relayed calls wait on, reused: a channel goes back only empty (see
// relay.forget), so that a call never gets the reply of an earlier one.
var replyChans = sync.Pool{New: func() any { return make(chan relayReply, 1) }}

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
			if seq, ok := parseSeq(id[len(relayPrefix):]); ok {
				c.r.deliver(seq, relayReply{resp: resp})
			} // else no call of the relay's: dropped, as an answer to a call that gave up
			return true
		}
	}
	return false
}

// parseSeq is the request number n of the relay's ID relayPrefix+n: decimal digits as
// strconv.FormatInt writes a positive number (no sign, no leading zero); ok=false for anything else, which
// no request of the relay has.
func parseSeq[S string | []byte](s S) (int64, bool) {
	if len(s) == 0 || len(s) > 18 || s[0] == '0' {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// takeLine is intercept for a line not yet decoded (see lineConn.setLineTaker): a plain successful
// response to the relay is decoded in one pass (parseRelayResponse); other lines go on to decodeMessage.
func (c *relayConn) takeLine(line []byte) bool {
	seq, result, ok := parseRelayResponse(line)
	if !ok {
		return false
	}
	if seq > 0 {
		c.r.deliver(seq, relayReply{result: result})
	} // else no call of the relay's: dropped, as intercept does
	return true
}

// Close implements mcp.Connection: calls still waiting fail.
func (c *relayConn) Close() error {
	err := c.Connection.Close()
	c.r.end(mcp.ErrConnectionClosed)
	return err
}

// deliver hands a reply to the call number seq waiting for it (a call that gave up has left: the answer is
// dropped). A call's channel is empty while it waits and gets one reply only (whoever takes the call out of
// pending sends it), so the send never blocks.
func (r *relay) deliver(seq int64, rep relayReply) {
	r.mu.Lock()
	ch := r.pending[seq]
	delete(r.pending, seq)
	r.mu.Unlock()
	if ch != nil {
		ch <- rep
	}
}

// forget takes the call number seq, which gives up, out of pending; when a reply is already on its way
// (deliver or end took the call out first), it waits for it, so that ch goes back to replyChans empty.
func (r *relay) forget(seq int64, ch chan relayReply) {
	r.mu.Lock()
	_, waiting := r.pending[seq]
	delete(r.pending, seq)
	r.mu.Unlock()
	if !waiting {
		<-ch
	}
}

// end fails the calls waiting, and every later one, with err.
func (r *relay) end(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended == nil {
		r.ended = err
	}
	for seq, ch := range r.pending {
		ch <- relayReply{err: r.ended}
		delete(r.pending, seq)
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
		res, err = g.upstream().CallTool(ctx, p)
		return res, nil, err
	}
	if p.Arguments == nil {
		p.Arguments = map[string]any{} // as the SDK sends it
	}
	seq := r.seq.Add(1)
	lc, direct := r.conn.(*lineConn)
	var line []byte
	if direct {
		// written at once and not kept: the buffer goes back to lineBufs when the call is written
		bp := lineBufs.Get().(*[]byte)
		defer func() {
			if cap(line) <= maxPooledLine {
				*bp = line[:0]
				lineBufs.Put(bp)
			}
		}()
		line = (*bp)[:0]
	}
	line, err = appendCallLine(line, seq, p)
	if err != nil {
		return nil, nil, fmt.Errorf("calling %q: %w", "tools/call", err)
	}
	ch := replyChans.Get().(chan relayReply)
	r.mu.Lock()
	if r.ended != nil {
		err := r.ended
		r.mu.Unlock()
		replyChans.Put(ch)
		return nil, nil, fmt.Errorf("%w: calling %q: %v", mcp.ErrConnectionClosed, "tools/call", err)
	}
	if r.pending == nil {
		r.pending = map[int64]chan relayReply{}
	}
	r.pending[seq] = ch
	r.mu.Unlock()
	if direct {
		err = ctx.Err()
		if err == nil {
			err = lc.writeLine(line)
		}
	} else {
		rid, _ := jsonrpc.MakeID(relayID(seq)) // a string is always an ID
		err = r.conn.Write(ctx, &jsonrpc.Request{ID: rid, Method: "tools/call", Params: line[len(callLinePrefix(seq)) : len(line)-2]})
	}
	if err != nil {
		r.forget(seq, ch) // forget the call
		replyChans.Put(ch)
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, fmt.Errorf("%w: calling %q: %v", mcp.ErrConnectionClosed, "tools/call", err)
	}
	select {
	case rep := <-ch:
		replyChans.Put(ch)
		return relayResult(rep)
	case <-ctx.Done():
		r.forget(seq, ch)
		replyChans.Put(ch)
		// As the SDK does, the upstream is told; the notification is written before the call returns (a
		// pipe takes it at once), so that nothing outlives the call.
		ncancel, err := json.Marshal(&mcp.CancelledParams{RequestID: relayID(seq), Reason: ctx.Err().Error()})
		if err == nil {
			_ = r.conn.Write(context.WithoutCancel(ctx), &jsonrpc.Request{Method: "notifications/cancelled", Params: ncancel})
		}
		return nil, nil, ctx.Err()
	}
}

// relayID is the ID of the relay's request number seq.
func relayID(seq int64) string { return relayPrefix + strconv.FormatInt(seq, 10) }

// lineBufs are buffers for the lines the gateway encodes itself and writes at once (relayed calls,
// verbatim results); a buffer that grew past maxPooledLine is not kept.
var lineBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

const maxPooledLine = 64 << 10

// appendJSONString appends s encoded as json.Marshal encodes it.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			e, _ := json.Marshal(s) // a string always encodes
			return append(b, e...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// callLinePrefix is the start of the line of the relay's request number seq, up to its parameters.
func callLinePrefix(seq int64) string {
	return `{"jsonrpc":"2.0","id":"` + relayPrefix + strconv.FormatInt(seq, 10) + `","method":"tools/call","params":`
}

// appendCallLine appends to b the line of the relay's tools/call number seq, "\n" included. The parameters are encoded as
// json.Marshal encodes p, except that arguments already encoded (as the client sent them, which its
// decoding validated, or as the gateway redacted them) are copied rather than compacted again, unless
// they hold a line break (as whitespace between their tokens, from a client over HTTP).
func appendCallLine(b []byte, seq int64, p *mcp.CallToolParams) ([]byte, error) {
	b = append(b, `{"jsonrpc":"2.0","id":"`+relayPrefix...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `","method":"tools/call","params":`...)
	if args, ok := p.Arguments.(json.RawMessage); ok && p.Meta == nil && len(args) > 0 && bytes.IndexByte(args, '\r') < 0 && bytes.IndexByte(args, '\n') < 0 {
		b = append(b, `{"name":`...)
		b = appendJSONString(b, p.Name)
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
func relayResult(rep relayReply) (*mcp.CallToolResult, []byte, error) {
	if rep.err != nil {
		return nil, nil, fmt.Errorf("%w: calling %q: %v", mcp.ErrConnectionClosed, "tools/call", rep.err)
	}
	result := rep.result
	if resp := rep.resp; resp != nil {
		if resp.Error != nil {
			var je *jsonrpc.Error
			if errors.As(resp.Error, &je) && resp.ID.IsValid() {
				return nil, nil, fmt.Errorf("calling %q: %w", "tools/call", je)
			}
			return nil, nil, fmt.Errorf("%w: calling %q: %v", mcp.ErrConnectionClosed, "tools/call", resp.Error)
		}
		result = resp.Result
	}
	if res, verbatim, ok := decodePlainResult(result); ok {
		if verbatim {
			return res, result, nil
		}
		return res, nil, nil
	}
	res, err := decodeToolResult(result)
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
	if err := strictjson.Unmarshal(raw, &p); err == nil && plainText(&p) {
		res := &mcp.CallToolResult{Meta: p.Meta, StructuredContent: p.StructuredContent, IsError: p.IsError,
			Content: make([]mcp.Content, len(p.Content))} // never nil, as the SDK decodes it
		for i, c := range p.Content {
			res.Content[i] = &mcp.TextContent{Text: c.Text}
		}
		return res, nil
	}
	var res mcp.CallToolResult
	if err := strictjson.UnmarshalLenient(raw, &res); err != nil {
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
