package mcpgateway

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrail-control/guard/internal/strictjson"
)

// LineTransport is an mcp.Transport for newline-delimited JSON-RPC over a pair of streams: the stdio
// transport of MCP (the gateway's stdin and stdout, or the pipes of an upstream's process).
//
// It does what mcp.IOTransport does at a fraction of the cost per message: the SDK's transport decodes
// every message through a streaming decoder that allocates a 32 KiB buffer, twice (once trying it as a
// batch), where this one reads a line into a reused buffer and decodes it once with encoding/json.
// It follows the MCP specification of stdio strictly:
//
//   - a message is one line (ended by "\n", an optional "\r" before it is dropped) holding one JSON-RPC
//     request, notification or response; blank lines are skipped;
//   - a line longer than MaxLineLength, or one that is not a JSON-RPC message, fails the read, which ends
//     the connection (as the SDK's transport does);
//   - JSON-RPC batches (a JSON array), which MCP dropped in its 2025-06-18 version, are refused the same way
//     (the SDK's transport accepts them from clients of older versions).
//
// Close closes both streams and unblocks a Read in progress even when the reader cannot be interrupted
// (the process's stdin): the read runs on its own goroutine, which ends once the stream does.
type LineTransport struct {
	Reader io.ReadCloser
	Writer io.WriteCloser
	// MaxLineLength bounds one inbound message in bytes; 0 means mcp.DefaultMaxLineLength (16 MiB), a
	// negative value means no bound.
	MaxLineLength int
	// InvalidLine, when set, makes the connection tolerant as the TypeScript SDK's stdio transport is: a
	// line that is not a JSON-RPC message (a library's print on an upstream's stdout) is handed to it and
	// skipped instead of ending the connection. line is valid during the call only. A line longer than
	// MaxLineLength still ends the connection. LogInvalidLines makes one that logs a bounded number.
	InvalidLine func(line []byte, err error)
}

// Connect implements mcp.Transport.
func (t *LineTransport) Connect(context.Context) (mcp.Connection, error) {
	return newLineConn(t.Reader, t.Writer, t.MaxLineLength, t.InvalidLine, func() error {
		return errors.Join(t.Reader.Close(), t.Writer.Close())
	}), nil
}

// ErrLineTooLong is the read error of a LineTransport when a message is longer than its MaxLineLength.
var ErrLineTooLong = errors.New("mcp: JSON-RPC message longer than the maximum line length")

// lineConn is the mcp.Connection of LineTransport and CommandTransport.
type lineConn struct {
	w       io.Writer
	writeMu sync.Mutex

	incoming  chan lineOrErr // from the read loop
	intercept atomic.Pointer[func(jsonrpc.Message) bool]
	lineTaker atomic.Pointer[func([]byte) bool]
	closed    chan struct{}
	once      sync.Once
	closeFn   func() error
	closeErr  error
	invalid   func([]byte, error) // LineTransport.InvalidLine
}

type lineOrErr struct {
	msg jsonrpc.Message
	err error
}

func newLineConn(r io.Reader, w io.Writer, maxLine int, invalid func([]byte, error), closeFn func() error) *lineConn {
	if maxLine == 0 {
		maxLine = mcp.DefaultMaxLineLength
	}
	c := &lineConn{w: w, incoming: make(chan lineOrErr), closed: make(chan struct{}), closeFn: closeFn, invalid: invalid}
	go c.readLoop(bufio.NewReaderSize(r, 64<<10), maxLine)
	return c
}

// readLoop reads and decodes messages until the stream ends, a message is malformed or the connection is
// closed. Decoding here rather than in Read overlaps it with the handling of the previous message.
func (c *lineConn) readLoop(br *bufio.Reader, maxLine int) {
	var long []byte // a line longer than br's buffer, assembled
	for {
		line, err := readLine(br, maxLine, &long)
		var v lineOrErr
		switch {
		case err != nil:
			v.err = err
		case len(line) == 0:
			continue
		default:
			if f := c.lineTaker.Load(); f != nil && (*f)(line) {
				continue
			}
			v.msg, v.err = decodeMessage(line)
			if v.err != nil && c.invalid != nil {
				c.invalid(line, v.err)
				continue
			}
			if f := c.intercept.Load(); v.err == nil && f != nil && (*f)(v.msg) {
				continue
			}
		}
		select {
		case c.incoming <- v:
		case <-c.closed:
			return
		}
		if v.err != nil {
			return
		}
	}
}

// readLine returns the next line without its "\n" or "\r\n"; the slice is valid until the next call.
// At the end of the stream a last line without "\n" is returned, then io.EOF.
func readLine(br *bufio.Reader, maxLine int, long *[]byte) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull { // longer than the buffer: assemble it
		*long = append((*long)[:0], line...)
		for err == bufio.ErrBufferFull {
			if maxLine > 0 && len(*long) > maxLine {
				return nil, fmt.Errorf("%w (%d bytes)", ErrLineTooLong, maxLine)
			}
			line, err = br.ReadSlice('\n')
			*long = append(*long, line...)
		}
		line = *long
		if cap(*long) > 1<<20 {
			*long = nil // do not keep a huge buffer for the rest of the session
		} else {
			*long = (*long)[:0]
		}
	}
	if err != nil && !(err == io.EOF && len(line) > 0) {
		return nil, err
	}
	n := len(line)
	if n > 0 && line[n-1] == '\n' {
		n--
		if n > 0 && line[n-1] == '\r' {
			n--
		}
	}
	if maxLine > 0 && n > maxLine {
		return nil, fmt.Errorf("%w (%d bytes)", ErrLineTooLong, maxLine)
	}
	return trimSpace(line[:n]), nil
}

// trimSpace drops JSON whitespace around b (so that a line of spaces counts as blank).
func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// setInterceptor makes the read loop offer each message to f first; the messages f takes (true) are not
// returned by Read. It saves a goroutine hand-off per message to the fast path and the relay, which
// otherwise take their messages in a wrapper's Read. f must not block.
func (c *lineConn) setInterceptor(f func(jsonrpc.Message) bool) { c.intercept.Store(&f) }

// setLineTaker makes the read loop offer each line to f before it decodes it (and before the
// interceptor): the lines f takes (true) are neither decoded nor returned by Read. f is the one-pass
// decoder of the fast path or the relay (fastdecode.go); it must not block or keep line, whose buffer is
// reused.
func (c *lineConn) setLineTaker(f func([]byte) bool) { c.lineTaker.Store(&f) }

// Read implements mcp.Connection.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	default:
	}
	select {
	case v := <-c.incoming:
		return v.msg, v.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	}
}

// Write implements mcp.Connection: one line per message, written with one call of the writer.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("marshaling message: %v", err)
	}
	return c.writeLine(append(data, '\n'))
}

// writeLine writes one message the caller encoded, its "\n" included, with one call of the writer.
func (c *lineConn) writeLine(line []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	_, err := c.w.Write(line)
	if err != nil {
		// The peer stopped reading (EPIPE: a client that closed its end of our stdout, an upstream that
		// died): nothing more can reach it, so the connection ends, and with it the session, rather than
		// reading on for nobody. Not under writeMu: Close may wait for an upstream's process.
		go c.Close()
	}
	return err
}

// Close implements mcp.Connection. It is idempotent; a Read in progress returns io.EOF.
func (c *lineConn) Close() error {
	c.once.Do(func() {
		close(c.closed)
		c.closeErr = c.closeFn()
	})
	return c.closeErr
}

// SessionID implements mcp.Connection: a stream has no session ID.
func (c *lineConn) SessionID() string { return "" }

// wireMessage is the JSON-RPC envelope as it is decoded. Method is raw so that a present "method" key
// (even "") tells a request from a response, as the SDK's decoder does.
type wireMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      any             `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *jsonrpc.Error  `json:"error"`
}

// decodeMessage decodes one JSON-RPC message with the rules of the SDK's jsonrpc.DecodeMessage (version
// "2.0", a number, string or null id, a request when "method" is present, else a response with an id),
// with strictjson (keys compared exactly, repeated keys refused) on the whole line. data is not retained:
// params and results are copied.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	if data[0] == '[' {
		return nil, errors.New("unmarshaling jsonrpc message: JSON-RPC batches are not supported (MCP dropped them in 2025-06-18)")
	}
	var w wireMessage
	if err := strictjson.UnmarshalLenient(data, &w); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if w.JSONRPC != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected %q", w.JSONRPC, "2.0")
	}
	id, err := jsonrpc.MakeID(w.ID)
	if err != nil {
		return nil, err
	}
	if len(w.Method) > 0 {
		var method string
		if err := strictjson.UnmarshalLenient(w.Method, &method); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		return &jsonrpc.Request{ID: id, Method: method, Params: w.Params}, nil
	}
	if !id.IsValid() {
		return nil, errors.New("JSON RPC invalid request: a response without an id")
	}
	resp := &jsonrpc.Response{ID: id, Result: w.Result}
	if w.Error != nil {
		resp.Error = w.Error
	}
	return resp, nil
}
