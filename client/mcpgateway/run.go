package mcpgateway

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrNoServer is returned by Run when Server has not been called.
var ErrNoServer = errors.New("mcp gateway: Run before Server")

// Run serves one client session over t with the gateway's server (Server must have been called), until
// the client closes its side (nil) or ctx is done (ctx's error). On ctx done it first ends every request in
// flight, then closes the session. mcp.Server.Run alone cannot stop such a session: it waits for the
// requests in flight, and a client's subscriptions/listen request lasts as long as the session.
// Once ctx has ended a session this way the gateway answers no more requests: Close it.
//
// Run answers the plain tools/call requests of the session itself, without the SDK's server session
// (see fastpath.go): the same checks and forwarding at a fraction of the cost per call.
func (g *Gateway) Run(ctx context.Context, t mcp.Transport) error {
	g.mu.Lock()
	srv := g.srv
	g.mu.Unlock()
	if srv == nil {
		return ErrNoServer
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	served := make(chan error, 1)
	go func() { served <- runSession(runCtx, srv, &fastTransport{Transport: t, g: g}) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
		g.cancelHandlers()
		stop()
		<-served
		return ctx.Err()
	}
}

// handlerContext is ctx, also cancelled when the gateway ends its requests (Run on a cancelled context,
// Close). The returned function releases it.
func (g *Gateway) handlerContext(ctx context.Context) (context.Context, func()) {
	hctx, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(g.handlers, cancel)
	return hctx, func() {
		unhook()
		cancel()
	}
}
