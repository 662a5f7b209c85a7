package mcpgateway

import (
	"context"
	"maps"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
)

// progressTarget is where the progress notifications of one forwarded call go: the client session that
// made the call, with the token that client chose.
type progressTarget struct {
	ss    *mcp.ServerSession
	token any
}

// trackProgress gives a forwarded call a progress token of the gateway's own (two clients may pick the
// same token, and they share the upstream session) and remembers whose it is until done is called.
func (g *Gateway) trackProgress(meta mcp.Meta, ss *mcp.ServerSession, clientToken any) (mcp.Meta, func()) {
	tok := "guard-" + strconv.FormatInt(g.progressSeq.Add(1), 10)
	g.progress.Store(tok, progressTarget{ss: ss, token: clientToken})
	meta = maps.Clone(meta)
	if meta == nil {
		meta = mcp.Meta{}
	}
	meta["progressToken"] = tok
	// The SDK hands a response to the caller as soon as it is read, while notifications read before it
	// wait in a queue for their handler: the last progress of a call can be handled just after the call
	// returned. The token is kept for a moment so that it is not dropped.
	return meta, func() { time.AfterFunc(progressGrace, func() { g.progress.Delete(tok) }) }
}

// progressGrace is how long a call's progress token outlives the call.
const progressGrace = 2 * time.Second

// onProgress passes an upstream's progress notification on to the client whose call it is about, with
// the client's own token. Notifications for calls that are long over (or never were) are dropped; the
// last one of a call may reach the client just after the call's result.
func (g *Gateway) onProgress(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
	if req == nil || req.Params == nil {
		return
	}
	tok, ok := req.Params.ProgressToken.(string)
	if !ok {
		return
	}
	v, ok := g.progress.Load(tok)
	if !ok {
		return
	}
	t := v.(progressTarget)
	p := *req.Params
	p.ProgressToken = t.token
	if err := t.ss.NotifyProgress(ctx, &p); err != nil {
		g.log.Debug("progress notification not delivered", zap.Error(err))
	}
}
