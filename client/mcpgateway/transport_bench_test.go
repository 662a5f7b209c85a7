package mcpgateway_test

import (
	"context"
	"io"
	"os"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrail-control/guard/client/mcpgateway"
)

// pipeTransports returns two transports joined by OS pipes, as a client and a server on stdio are: "sdk"
// is the SDK's mcp.IOTransport, "line" the gateway's LineTransport.
func pipeTransports(tb testing.TB, kind string) (mcp.Transport, mcp.Transport) {
	tb.Helper()
	r1, w1, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	r2, w2, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	if kind == "sdk" {
		return &mcp.IOTransport{Reader: r1, Writer: w2}, &mcp.IOTransport{Reader: r2, Writer: w1}
	}
	return &mcpgateway.LineTransport{Reader: r1, Writer: w2}, &mcpgateway.LineTransport{Reader: r2, Writer: w1}
}

// BenchmarkToolCallPipes measures one allowed tools/call as BenchmarkToolCall does, but over OS pipes (what
// stdio is) and with each of the two transports on every hop: straight to the upstream (direct), and
// through the gateway served with Gateway.Run (gateway). The overhead of the gateway is gateway minus
// direct with the same transport.
func BenchmarkToolCallPipes(b *testing.B) {
	args := map[string]any{"text": "list the files in the current directory"}
	ctx := context.Background()
	for _, kind := range []string{"sdk", "line"} {
		b.Run("direct/"+kind, func(b *testing.B) {
			u := newUpstream()
			ct, st := pipeTransports(b, kind)
			ss, err := u.srv.Connect(ctx, st, nil)
			if err != nil {
				b.Fatal(err)
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, benchSession)
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = cs.Close(); _ = ss.Wait() }()
			benchCalls(b, cs, args)
		})
		if kind == "line" {
			// copy: the floor of any in-process proxy: the same hop as the gateway's (two more pipes, two more
			// reads and writes a message) with nothing done to the bytes.
			b.Run("copy/"+kind, func(b *testing.B) {
				u := newUpstream()
				ct, pt := pipeTransports(b, kind)
				qt, st := pipeTransports(b, kind)
				p, q := pt.(*mcpgateway.LineTransport), qt.(*mcpgateway.LineTransport)
				copied := make(chan struct{}, 2)
				go func() { _, _ = io.Copy(q.Writer, p.Reader); _ = q.Writer.Close(); copied <- struct{}{} }()
				go func() { _, _ = io.Copy(p.Writer, q.Reader); _ = p.Writer.Close(); copied <- struct{}{} }()
				ss, err := u.srv.Connect(ctx, st, nil)
				if err != nil {
					b.Fatal(err)
				}
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, benchSession)
				if err != nil {
					b.Fatal(err)
				}
				defer func() { _ = cs.Close(); _ = ss.Wait(); <-copied; <-copied }()
				benchCalls(b, cs, args)
			})
		}
		b.Run("gateway/"+kind, func(b *testing.B) {
			u := newUpstream()
			gt, ut := pipeTransports(b, kind)
			us, err := u.srv.Connect(ctx, ut, nil)
			if err != nil {
				b.Fatal(err)
			}
			gw, err := mcpgateway.Connect(ctx, gt, mcpgateway.Options{})
			if err != nil {
				b.Fatal(err)
			}
			lg, err := mcpgateway.NewLocalGuard(benchControls(), nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			gw.Server(lg)
			ct, st := pipeTransports(b, kind)
			runCtx, stop := context.WithCancel(ctx)
			ran := make(chan error, 1)
			go func() { ran <- gw.Run(runCtx, st) }()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, benchSession)
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				_ = cs.Close()
				stop()
				<-ran
				_ = gw.Close()
				_ = us.Close()
			}()
			benchCalls(b, cs, args)
		})
	}
}

func benchCalls(b *testing.B, cs *mcp.ClientSession, args map[string]any) {
	b.Helper()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU(b)
	for b.Loop() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("%+v %v", res, err)
		}
	}
	if cpu0 >= 0 {
		b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
	}
}

// benchSession is the client's protocol version in the benchmarks: 2025-11-25, the session protocol
// (initialize, then requests without per-request _meta) that MCP clients speak today.
var benchSession = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
