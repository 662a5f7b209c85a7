package mcpgateway

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrail-control/guard/internal/strictjson"
)

// The fast path of tools/call. The SDK's server session costs about as much per message as a whole call of
// a small tool: it decodes the parameters several times, each time through a streaming decoder with a
// 32 KiB buffer. Gateway.Run puts fastConn between the client's connection and the SDK: a plain tools/call
// of a session that has completed its initialize handshake is taken off the connection, handled by
// callTool exactly as the SDK would have called it (same checks, same forwarding, same errors), and
// answered on the connection directly. Everything else goes to the SDK untouched, including the calls the
// fast path does not take:
//
//   - a call before the handshake is complete (the SDK refuses it), or in a session of protocol version
//     2026-07-28 or later (the SDK validates the per-request _meta of that version);
//   - a call with a progress token (its progress goes through the SDK's session), with _meta keys of the
//     protocol ("io.modelcontextprotocol/..."), or with parameters other than name, arguments and _meta
//     (inputResponses, requestState, or unknown ones);
//   - a call of a tool the gateway does not serve, or whose parameters are not a JSON object.

// newProtocolVersion is the first MCP version with per-request _meta (SEP-2575); its sessions go to the SDK.
const newProtocolVersion = "2026-07-28"

// fastTransport wraps the transport of a client session for Gateway.Run.
type fastTransport struct {
	mcp.Transport
	g    *Gateway
	conn *fastConn // set by Connect
}

// Connect implements mcp.Transport.
func (t *fastTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	fc := &fastConn{Connection: c, g: t.g, calls: map[jsonrpc.ID]context.CancelFunc{}, work: make(chan fastJob)}
	// Under the gateway's handlers context, so that a call's context is also the handler context the SDK's
	// path gets from handlerContext, without joining two contexts on every call.
	fc.ctx, fc.cancel = context.WithCancel(t.g.handlers)
	t.conn = fc
	if lc, ok := c.(*lineConn); ok {
		lc.setLineTaker(fc.takeLine)
		lc.setInterceptor(fc.intercept)
	}
	return fc, nil
}

// fastConn is a client connection with the fast path of tools/call (see above).
type fastConn struct {
	mcp.Connection // Write and SessionID are the connection's (Read and Close below)
	g              *Gateway
	session        atomic.Pointer[mcp.ServerSession] // the SDK's session of this connection (runSession): fast calls ask its user (elicit.go)

	ctx    context.Context // fast calls run under it; ended by Close, the end of the input, the gateway's handlers
	cancel context.CancelFunc
	wg     sync.WaitGroup // the workers
	work   chan fastJob   // to an idle worker

	mu          sync.Mutex
	initID      jsonrpc.ID // the client's initialize request
	version     string     // the protocol version the SDK answered it with
	initialized bool       // the client sent notifications/initialized
	closed      bool
	calls       map[jsonrpc.ID]context.CancelFunc // fast calls in flight, by request ID
}

// Read implements mcp.Connection: it returns the next message the fast path does not take.
func (c *fastConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			c.cancel() // as the SDK does: no cancellation can arrive any more
			return nil, err
		}
		if !c.intercept(msg) {
			return msg, nil
		}
	}
}

// intercept looks at each message from the client before the SDK: it takes the calls of the fast path
// and the cancellations of those calls (true), and notes the handshake. It does not block: on a lineConn
// it runs on the connection's read loop (see interceptor).
func (c *fastConn) intercept(msg jsonrpc.Message) bool {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return false
	}
	switch req.Method {
	case "initialize":
		c.mu.Lock()
		c.initID, c.version = req.ID, ""
		c.mu.Unlock()
	case "notifications/initialized":
		c.mu.Lock()
		c.initialized = true
		c.mu.Unlock()
	case "notifications/cancelled":
		return c.cancelCall(req.Params)
	case "tools/call":
		return req.IsCall() && c.take(req)
	}
	return false
}

// Write implements mcp.Connection. It notes the protocol version of the SDK's answer to initialize.
func (c *fastConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Error == nil {
		c.mu.Lock()
		if c.initID.IsValid() && resp.ID == c.initID {
			var ir struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			if strictjson.UnmarshalLenient(resp.Result, &ir) == nil {
				c.version = ir.ProtocolVersion
			}
		}
		c.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

// Close implements mcp.Connection: it ends the fast calls in flight, closes the connection (which also
// ends a worker's write to a client that stopped reading) and waits for the workers.
func (c *fastConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	err := c.Connection.Close()
	c.wg.Wait()
	return err
}

// fastParams are the parameters of a tools/call the fast path takes.
type fastParams struct {
	name string
	args json.RawMessage
	meta mcp.Meta
}

// takeLine is take for a line of the client's not yet decoded (see lineConn.setLineTaker): a plain
// tools/call is decoded in one pass (parseCallLine); other lines, and the calls the fast path does not
// take, go on to decodeMessage and intercept.
func (c *fastConn) takeLine(line []byte) bool {
	if !c.ready() {
		return false
	}
	id, p, ok := parseCallLine(line, c.g.toolName)
	if !ok {
		return false
	}
	c.g.fastLines.Add(1) // before the call can answer
	if !c.start(id, p) {
		c.g.fastLines.Add(-1)
		return false
	}
	return true
}

// ready reports whether the session is at a stage the fast path serves calls in (see above).
func (c *fastConn) ready() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.initialized && c.version != "" && c.version < newProtocolVersion && !c.closed
}

// take starts a fast call for req, or returns false to leave it to the SDK.
func (c *fastConn) take(req *jsonrpc.Request) bool {
	if !c.ready() {
		return false
	}
	p, ok := parseFastParams(req.Params)
	return ok && c.start(req.ID, p)
}

// start starts a fast call of the tool p.name with ID id, or returns false to leave it to the SDK.
func (c *fastConn) start(id jsonrpc.ID, p fastParams) bool {
	if !c.g.serves(p.name) {
		return false
	}
	ctx, cancel := context.WithCancel(c.ctx)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		cancel()
		return false
	}
	if _, dup := c.calls[id]; dup {
		c.mu.Unlock()
		cancel()
		return false // an ID already in flight: the SDK answers it as it does
	}
	c.calls[id] = cancel
	job := fastJob{ctx: ctx, id: id, p: p}
	select {
	case c.work <- job: // an idle worker took it
	default:
		c.wg.Add(1)
		go c.worker(job)
	}
	c.mu.Unlock()
	return true
}

// fastJob is one fast call for a worker.
type fastJob struct {
	ctx context.Context
	id  jsonrpc.ID
	p   fastParams
}

// worker serves fast calls until the connection closes. Workers outlive their call so that the next one
// does not pay for a new goroutine and the growth of its stack (the checks and the JSON codecs need a
// deep one); there are as many as there were calls at once.
func (c *fastConn) worker(job fastJob) {
	defer c.wg.Done()
	for {
		c.serve(job.ctx, job.id, job.p)
		select {
		case job = <-c.work:
		case <-c.ctx.Done():
			return
		}
	}
}

// serve runs one fast call and answers it, unless it was cancelled (by the client, or because the session
// ends): a cancelled request gets no answer.
func (c *fastConn) serve(ctx context.Context, id jsonrpc.ID, p fastParams) {
	defer func() {
		c.mu.Lock()
		cancel := c.calls[id]
		delete(c.calls, id)
		c.mu.Unlock()
		cancel()
	}()
	c.g.fastServed.Add(1)
	res, raw, err := c.g.callToolRaw(ctx, c.session.Load(), p.name, &mcp.CallToolParamsRaw{Name: p.name, Arguments: p.args, Meta: p.meta})
	if ctx.Err() != nil || c.g.handlers.Err() != nil {
		return
	}
	if lc, ok := c.Connection.(*lineConn); ok && raw != nil && err == nil {
		// The upstream's result as it came (see decodePlainResult), under the client's ID.
		c.g.verbatim.Add(1)
		bp := lineBufs.Get().(*[]byte)
		line := appendResponseLine((*bp)[:0], id, raw)
		_ = lc.writeLine(line)
		if cap(line) <= maxPooledLine {
			*bp = line[:0]
			lineBufs.Put(bp)
		}
		return
	}
	resp, err := toolResponse(id, res, err)
	if err != nil {
		resp = &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}}
	}
	_ = c.Connection.Write(ctx, resp)
}

// responseLine is the line of a successful response with result, which is valid JSON; the ID is
// encoded as the SDK's encoder does.
func responseLine(id jsonrpc.ID, result []byte) []byte {
	return appendResponseLine(make([]byte, 0, len(result)+64), id, result)
}

// appendResponseLine appends responseLine(id, result) to b.
func appendResponseLine(b []byte, id jsonrpc.ID, result []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	switch v := id.Raw().(type) {
	case int64:
		b = strconv.AppendInt(b, v, 10)
	default: // a string: IDs are numbers or strings
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // as the SDK's encoder
		_ = enc.Encode(v)
		b = append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
	}
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, "}\n"...)
}

// toolResponse is the response the SDK's server writes for a tool handler's result: an error as it is, a
// result with its content never null, and refused when it has both content and input requests.
func toolResponse(id jsonrpc.ID, res *mcp.CallToolResult, herr error) (*jsonrpc.Response, error) {
	if herr != nil {
		return &jsonrpc.Response{ID: id, Error: herr}, nil
	}
	if res.InputRequests != nil && (len(res.Content) > 0 || res.StructuredContent != nil) {
		return &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: "server bug: result has both content and inputRequests"}}, nil
	}
	if res.Content == nil && !res.NeedsInput() {
		cp := *res
		cp.Content = []mcp.Content{}
		res = &cp
	}
	// The bytes the SDK's encoder writes: it calls this method and keeps its output.
	b, err := res.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return &jsonrpc.Response{ID: id, Result: b}, nil
}

// cancelCall cancels the fast call a notifications/cancelled is about; false when it is not about one.
func (c *fastConn) cancelCall(params json.RawMessage) bool {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if strictjson.UnmarshalLenient(params, &p) != nil {
		return false
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil || !id.IsValid() {
		return false
	}
	c.mu.Lock()
	cancel, ok := c.calls[id]
	c.mu.Unlock()
	if ok {
		cancel()
	}
	return ok
}

// parseFastParams decodes the parameters of a tools/call the fast path can take (see above).
func parseFastParams(raw json.RawMessage) (fastParams, bool) {
	var fields map[string]json.RawMessage
	var p fastParams
	if strictjson.UnmarshalLenient(raw, &fields) != nil || fields == nil {
		return p, false
	}
	for k, v := range fields {
		switch k {
		case "name":
			if strictjson.UnmarshalLenient(v, &p.name) != nil {
				return p, false
			}
		case "arguments":
			if len(v) == 0 || v[0] != '{' {
				return p, false // not an object (null included): the SDK's path answers it
			}
			p.args = v
		case "_meta":
			if strictjson.UnmarshalLenient(v, &p.meta) != nil || !plainMeta(p.meta) {
				return p, false
			}
		default:
			return p, false
		}
	}
	return p, p.name != ""
}

// plainMeta reports whether the _meta of a tools/call leaves it to the fast path: an object without a
// progress token or keys of the protocol.
func plainMeta(m mcp.Meta) bool {
	if m == nil {
		return false
	}
	for k := range m {
		if k == "progressToken" || strings.HasPrefix(k, "io.modelcontextprotocol/") {
			return false
		}
	}
	return true
}

// toolName returns the name of the gateway's tool whose name is the bytes b, "" when there is none.
func (g *Gateway) toolName(b []byte) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, t := range g.tools {
		if t.Name == string(b) {
			return t.Name
		}
	}
	return ""
}

// serves reports whether the gateway serves the tool name (its server has it).
func (g *Gateway) serves(name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, t := range g.tools {
		if t.Name == name {
			return true
		}
	}
	return false
}
