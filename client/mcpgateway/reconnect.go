package mcpgateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
)

// Reconnection to an upstream that went away (Options.Reconnect): the session is replaced by a new one to the
// same transport, tried with exponential backoff; meanwhile requests are answered with errUpstreamDown's
// message, which says what happened and that the gateway keeps trying.

// Backoff of the reconnection attempts: the first after reconnectFirst, doubling up to reconnectMax.
const (
	reconnectFirst   = 200 * time.Millisecond
	reconnectMax     = 10 * time.Second
	reconnectTimeout = 10 * time.Second // bound on one attempt (connect, initialize, list the tools)
)

// downState is why the upstream is unreachable, while it is.
type downState struct {
	since    time.Time
	attempts int
	err      error
}

// downError is the MCP error of a request while the upstream is unreachable; nil when it is not.
func (g *Gateway) downError(what string) error {
	d := g.down.Load()
	if d == nil {
		return nil
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf(
		"upstream MCP server unreachable since %s (%v) during %s; the gateway is reconnecting (%d attempts so far): try again later",
		d.since.UTC().Format(time.RFC3339), d.err, what, d.attempts)}
}

// transportFailed reports whether err says the upstream's transport is broken (the session is gone, or the
// transport refused to send the request), which a reconnection may mend.
func transportFailed(err error) bool {
	if errors.Is(err, mcp.ErrConnectionClosed) {
		return true
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je.Code == codeRejected
	}
	return strings.Contains(err.Error(), "rejected by transport")
}

// codeRejected is the code the SDK's jsonrpc2 gives a request its transport refused to send.
const codeRejected = -32005

// reconnectLoop watches the upstream session up and, once it ends (or a request found its transport
// broken: upstreamFailed closes it), connects again until it succeeds or the gateway closes.
func (g *Gateway) reconnectLoop(up *mcp.ClientSession) {
	defer close(g.done)
	for {
		err := up.Wait()
		select {
		case <-g.stop:
			g.doneErr = err
			return
		default:
		}
		if err == nil {
			err = errors.New("the session ended")
		}
		g.log.Warn("upstream MCP server unreachable; reconnecting", zap.Error(err))
		g.down.Store(&downState{since: time.Now(), err: err})
		var ok bool
		if up, ok = g.reconnect(); !ok {
			return
		}
		g.down.Store(nil)
		g.log.Info("upstream MCP server reachable again")
		select { // its tools may have changed while it was away
		case g.sync <- struct{}{}:
		default:
		}
	}
}

// reconnect tries to connect again with backoff; false when the gateway closed first.
func (g *Gateway) reconnect() (*mcp.ClientSession, bool) {
	wait := reconnectFirst
	for attempt := 1; ; attempt++ {
		t := time.NewTimer(wait)
		select {
		case <-g.stop:
			t.Stop()
			return nil, false
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(g.handlers, reconnectTimeout)
		up, err := g.client.Connect(ctx, g.upT, &mcp.ClientSessionOptions{ProtocolVersion: g.upVer})
		cancel()
		if err == nil {
			g.up.Store(up)
			select {
			case <-g.stop: // Close ran meanwhile, and may have closed the session before this one
				_ = up.Close()
				return nil, false
			default:
			}
			return up, true
		}
		d := *g.down.Load()
		d.attempts, d.err = attempt, err
		g.down.Store(&d)
		g.log.Debug("reconnection failed", zap.Int("attempt", attempt), zap.Error(err))
		wait = min(2*wait, reconnectMax)
	}
}

// upstreamFailed is told of each failed upstream request: when the transport refused it, the session is
// closed so that reconnectLoop starts again (an HTTP server that restarted forgot the session).
func (g *Gateway) upstreamFailed(up *mcp.ClientSession, err error) {
	if !g.opts.Reconnect || g.relay != nil || up == nil || !transportFailed(err) {
		return
	}
	if g.upstream() == up {
		_ = up.Close()
	}
}

// downErrorSoon is downError once reconnectLoop has noticed the end of the session it was just told of
// (within goneGrace).
func (g *Gateway) downErrorSoon(what string) error {
	deadline := time.Now().Add(goneGrace)
	for {
		if err := g.downError(what); err != nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(5 * time.Millisecond)
	}
}
