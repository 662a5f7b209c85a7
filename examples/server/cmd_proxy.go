package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client"
	"github.com/guardrail-control/guard/llmproxy"
)

const proxyUsage = `guard proxy [--listen ADDR] [--server URL] [--agent NAME] [--openai-upstream URL] [--anthropic-upstream URL] [--fail-open] [flags]`

func init() {
	register(&command{name: "proxy", summary: "run the LLM API proxy: check every OpenAI and Anthropic API call of an agent against its controls on a guard server",
		usage: proxyUsage, run: runProxy,
		env: []envVar{
			{name: client.EnvURL, desc: "URL of the guard server (when --server is not given)"},
			{name: client.EnvAPIKey, desc: "the guard server's runtime API key"},
		}})
}

// proxyFlags are the settings of `guard proxy`.
type proxyFlags struct {
	listen, server, agent      string
	openai, anthropic          string
	failOpen                   bool
	window, overlap            int
	maxRequest                 int64
	upstreamTimeout, evalLimit time.Duration
}

func parseProxyFlags(args []string, stderr io.Writer) (*proxyFlags, error) {
	f := &proxyFlags{}
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.listen, "listen", "127.0.0.1:8787", "address to serve the proxy on (clients take http://ADDR/v1 as their base URL)")
	fs.StringVar(&f.server, "server", "", "URL of the guard server (default $GUARD_URL, then http://localhost:8000); the API key is read from $GUARD_API_KEY")
	fs.StringVar(&f.agent, "agent", "", "the agent of calls that name none in the X-Guard-Agent header")
	fs.StringVar(&f.openai, "openai-upstream", llmproxy.DefaultOpenAIBaseURL, "base URL of the OpenAI API or any OpenAI-compatible server (vLLM, Ollama, LiteLLM: its /v1)")
	fs.StringVar(&f.anthropic, "anthropic-upstream", llmproxy.DefaultAnthropicBaseURL, "base URL of the Anthropic API")
	fs.BoolVar(&f.failOpen, "fail-open", false, "when the guard server cannot be reached, let calls through unchecked (logged and counted) instead of refusing them with 503")
	fs.IntVar(&f.window, "window", llmproxy.DefaultWindow, "bytes of streamed text checked at once")
	fs.IntVar(&f.overlap, "overlap", llmproxy.DefaultOverlap, "bytes of each checked window carried into the next")
	fs.Int64Var(&f.maxRequest, "max-request-bytes", llmproxy.DefaultMaxRequestBytes, "bound on a request body")
	fs.DurationVar(&f.upstreamTimeout, "upstream-timeout", llmproxy.DefaultUpstreamTimeout, "bound on a non-streamed upstream call")
	fs.DurationVar(&f.evalLimit, "eval-timeout", 5*time.Second, "bound on one evaluation by the guard server")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s\n", proxyUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("proxy: unexpected argument %q", fs.Arg(0))
	}
	if f.agent != "" {
		if _, err := guard.NormalizeAgentName(f.agent); err != nil {
			return nil, fmt.Errorf("proxy: --agent: %w", err)
		}
	}
	if f.evalLimit <= 0 || f.upstreamTimeout <= 0 || f.maxRequest <= 0 {
		return nil, errors.New("proxy: --eval-timeout, --upstream-timeout and --max-request-bytes must be positive")
	}
	return f, nil
}

// remoteChecker evaluates the proxy's steps by POST /evaluation on the guard server.
type remoteChecker struct{ hc *client.HTTPClient }

func (rc remoteChecker) Check(r *http.Request, agent string, step *guard.Step, stage guard.Stage) (*guard.Result, error) {
	res, err := rc.hc.Evaluate(r.Context(), agent, *step, stage)
	if err == nil {
		return res, nil
	}
	var ae *client.APIError
	switch {
	case client.IsUnavailable(err):
		return nil, errors.Join(llmproxy.ErrUnavailable, err)
	case errors.As(err, &ae):
		msg := ae.Detail
		if ae.Code == "AGENT_NOT_FOUND" {
			msg = "agent " + agent + " not found"
		}
		return nil, &llmproxy.CheckError{Status: ae.Status, Code: "guard_" + ae.Code, Message: msg}
	}
	return nil, err
}

// runProxy is `guard proxy`: it serves until SIGINT/SIGTERM.
func runProxy(ctx context.Context, env *commandEnv, args []string) error {
	f, err := parseProxyFlags(args, env.stderr)
	if err != nil {
		return err
	}
	logger := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(env.stderr), zap.InfoLevel))
	defer func() { _ = logger.Sync() }()
	if f.server == "" {
		f.server = env.getenv(client.EnvURL)
	}
	if f.server == "" {
		f.server = "http://localhost:8000"
	}
	hc, err := client.NewHTTPClient(f.server, env.getenv(client.EnvAPIKey), client.WithTimeout(f.evalLimit), client.WithUserAgent("guard-proxy/"+version))
	if err != nil {
		return fmt.Errorf("proxy: --server: %w", err)
	}
	reg := prometheus.NewRegistry()
	metrics, err := llmproxy.NewMetrics(reg, "guard")
	if err != nil {
		return err
	}
	p, err := llmproxy.New(llmproxy.Config{OpenAIBaseURL: f.openai, AnthropicBaseURL: f.anthropic, Checker: remoteChecker{hc},
		DefaultAgent: f.agent, FailOpen: f.failOpen, Window: f.window, Overlap: f.overlap, MaxRequestBytes: f.maxRequest,
		UpstreamTimeout: f.upstreamTimeout, Logger: logger.Named("llm_proxy"), Metrics: metrics})
	if err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", p)
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	})
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("proxy: listen on %s: %w", f.listen, err)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second,
		ErrorLog: zap.NewStdLog(logger.Named("http"))}
	logger.Info("llm proxy ready", zap.String("listen", ln.Addr().String()), zap.String("guard_server", hc.BaseURL()),
		zap.String("openai_upstream", f.openai), zap.String("anthropic_upstream", f.anthropic), zap.Bool("fail_open", f.failOpen))
	fmt.Fprintf(env.stdout, "listening on http://%s\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
	}
	return nil
}
