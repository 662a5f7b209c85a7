package client

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/guardrail-control/guard"
)

// benchControls are 10 controls that apply to every llm step at both stages and do not match the
// benchmark input: the realistic cost of a clean call.
func benchControls(ex guard.Execution) []guard.AgentControl {
	patterns := []string{
		`\b\d{3}-\d{2}-\d{4}\b`, `(?i)ignore (all )?previous instructions`, `(?i)\bpassword\s*[:=]`,
		`\b4[0-9]{12}(?:[0-9]{3})?\b`, `(?i)drop\s+table`, `(?i)rm\s+-rf`, `AKIA[0-9A-Z]{16}`,
		`(?i)\bjailbreak\b`, `-----BEGIN [A-Z ]*PRIVATE KEY-----`, `(?i)\bsudo\b`,
	}
	out := make([]guard.AgentControl, len(patterns))
	for i, p := range patterns {
		out[i] = ctl(int64(i+1), fmt.Sprintf("c%d", i), ex, guard.DecisionDeny, "input", p)
	}
	return out
}

var benchInput = strings.Repeat("Please summarise the quarterly report for the board. ", 4)

func benchProtect(b *testing.B, p func(context.Context, string) (string, error)) {
	b.Helper()
	ctx := context.Background()
	b.ReportAllocs()
	start := cpuTime()
	n := 0
	for b.Loop() {
		if _, err := p(ctx, benchInput); err != nil {
			b.Fatal(err)
		}
		n++
	}
	// The machine running the benchmarks is shared: CPU time of the whole process per call (every
	// goroutine, GC included; for "server" the in-process server too) is steadier than wall time.
	b.ReportMetric(float64(cpuTime()-start)/float64(n), "cpu-ns/op")
}

// cpuTime returns the user + system CPU time of the process.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkProtect measures the overhead of Protect on a function that returns its input: bare (no
// Protect), inprocess (10 sdk controls at both stages; no events and no logs, so the engine's
// decision-only Check runs), inprocess+events (the same with observability on: full results, events
// queued and posted to a fake server that discards them), server (10 server controls evaluated by a live server on
// loopback through POST /evaluation, the server's event recording off), server+events (the same with the
// server recording one event per control into its SQLite store).
func BenchmarkProtect(b *testing.B) {
	b.Run("bare", func(b *testing.B) { benchProtect(b, echo) })
	b.Run("inprocess", func(b *testing.B) {
		_, srv := newFakeAPI(b, benchControls(guard.ExecutionSDK)...)
		a := benchAgent(b, testConfig(srv.URL))
		benchProtect(b, Protect(a, echo, StepName("chat")))
	})
	b.Run("engine-only", func(b *testing.B) {
		// The engine's Check at both stages with the same controls, without Protect: what Protect adds
		// is inprocess minus this.
		_, srv := newFakeAPI(b, benchControls(guard.ExecutionSDK)...)
		a := benchAgent(b, testConfig(srv.URL))
		eng := a.pol.Load().sdk
		benchProtect(b, func(ctx context.Context, s string) (string, error) {
			step := guard.Step{Type: "llm", Name: "chat", Input: s}
			if err := eng.Check(ctx, &step, guard.StagePre); err != nil {
				return "", err
			}
			step.Output = s
			return s, eng.Check(ctx, &step, guard.StagePost)
		})
	})
	b.Run("inprocess+events", func(b *testing.B) {
		f, srv := newFakeAPI(b, benchControls(guard.ExecutionSDK)...)
		f.discardEvents = true
		cfg := testConfig(srv.URL)
		cfg.Observability = Bool(true)
		a := benchAgent(b, cfg)
		benchProtect(b, Protect(a, echo, StepName("chat")))
	})
	b.Run("inprocess+spans", func(b *testing.B) {
		// Config.TracerProvider: guard.protect, two guard.check and guard.call spans per call, batched to
		// an exporter that drops them.
		_, srv := newFakeAPI(b, benchControls(guard.ExecutionSDK)...)
		cfg := testConfig(srv.URL)
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		cfg.TracerProvider = tp
		a := benchAgent(b, cfg)
		benchProtect(b, Protect(a, echo, StepName("chat")))
	})
	for _, obs := range []bool{false, true} {
		name := "server"
		if obs {
			name = "server+events"
		}
		b.Run(name, func(b *testing.B) {
			ls := startLiveServerObs(b, obs)
			admin := ls.admin(b)
			a := benchAgent(b, testConfig(ls.url()))
			for _, c := range benchControls(guard.ExecutionServer) {
				mustCreate(b, admin, a.Name(), c)
			}
			if err := a.Refresh(context.Background()); err != nil {
				b.Fatal(err)
			}
			benchProtect(b, Protect(a, echo, StepName("chat")))
		})
	}
}

func benchAgent(b *testing.B, cfg Config) *Agent {
	b.Helper()
	a, err := Init(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = a.Close() })
	return a
}
