// Command guard is the guardrail control service and its operator tool, one binary:
//
//	go build -o guard ./examples/server
//
//	guard serve [--migrate]  serve the REST API, the dashboard and /metrics (the default command);
//	                         --migrate applies pending database migrations first
//	guard migrate            apply the database migrations and exit
//	guard version            version, commit, Go version and build tags (also guard --version)
//	guard help [command]     every command and every environment variable with its default (also -h)
//
// Other commands register themselves in the command table (commands.go) and appear in `guard help`.
// Configuration comes from the environment; the table in config.go declares every variable once (name,
// default, description) for LoadConfig and for the help text. Once listening, serve prints
// "listening on http://host:port" on stdout and logs one start-up line. Exit status: 0 on success and for
// help, 1 on an error, and whatever a command documents (validate: 1 when a file is invalid, diff: 2).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/guardrail-control/guard/client/mcpgateway"
	"github.com/guardrail-control/guard/server"
	"github.com/guardrail-control/guard/server/capture"
	"github.com/guardrail-control/guard/server/observability"
	"github.com/guardrail-control/guard/server/ui"
	"github.com/guardrail-control/guard/store"

	_ "github.com/guardrail-control/guard/evaluator/jsonvalidate"     // json: validates tool arguments and structured output
	_ "github.com/guardrail-control/guard/evaluator/pii"              // pii: e-mail, phone, cards, IBAN, SSN, IP addresses
	_ "github.com/guardrail-control/guard/evaluator/promptattack"     // prompt_attack: the built-in prompt-attack classifier
	_ "github.com/guardrail-control/guard/evaluator/promptclassifier" // ext.prompt_injection, available when EXT_PROMPT_CLASSIFIER_URL is set
	_ "github.com/guardrail-control/guard/evaluator/secrets"          // secrets: credentials, with gitleaks' rules
	_ "github.com/guardrail-control/guard/evaluator/sqlguard"         // sql: parsed SQL rules (MySQL dialect)
	_ "github.com/guardrail-control/guard/evaluator/toxicity"         // ext.toxicity, available when EXT_API_KEY is set
)

// shutdownTimeout bounds how long in-flight requests may take after SIGTERM.
const shutdownTimeout = 20 * time.Second

func main() {
	// guard mcp starts its upstreams under a watchdog that is this binary again (client/mcpgateway,
	// supervise.go): it runs as that and exits here when asked.
	mcpgateway.RunSupervisorIfAsked()
	err := run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	var ee *exitError
	if err != nil && !errors.As(err, &ee) && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "guard:", err)
	}
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	os.Exit(exitStatus(err))
}

// run executes one command; it returns when the command is done (serve: after a graceful shutdown).
// With no command, or a first argument that is a flag, it serves.
func run(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	name := "serve"
	switch {
	case len(args) > 0 && isHelpArg(args[0]):
		name, args = "help", args[1:]
	case len(args) > 0 && isVersionArg(args[0]):
		name, args = "version", args[1:]
	case len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-':
		name, args = args[0], args[1:]
	}
	cmd, ok := commands[name]
	if !ok {
		return fmt.Errorf("unknown command %q (commands: %s; guard help lists them)", name, strings.Join(commandNames(), ", "))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err := cmd.run(ctx, &commandEnv{getenv: getenv, stdin: os.Stdin, stdout: stdout, stderr: stderr}, args)
	return redact(err, getenv)
}

func init() {
	register(&command{name: "serve", summary: "serve the REST API, the dashboard and the metrics (the default command)",
		usage: "guard serve [--migrate]", run: runServe})
	register(&command{name: "migrate", summary: "apply the database migrations and exit",
		usage: "guard migrate", run: runMigrate})
}

// runServe is `guard serve [--migrate]`.
func runServe(ctx context.Context, env *commandEnv, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	migrateFirst := fs.Bool("migrate", false, "apply pending database migrations before serving")
	if err := parseNoArgs(fs, "guard serve [--migrate]", args); err != nil {
		return err
	}
	cfg, logger, err := loadConfigAndLogger(env.getenv)
	if err != nil {
		return err
	}
	defer func() { _ = logger.Sync() }()
	return serve(ctx, cfg, *migrateFirst, logger, env.stdout, env.stderr)
}

// runMigrate is `guard migrate`.
func runMigrate(ctx context.Context, env *commandEnv, args []string) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	if err := parseNoArgs(fs, "guard migrate", args); err != nil {
		return err
	}
	cfg, logger, err := loadConfigAndLogger(env.getenv)
	if err != nil {
		return err
	}
	defer func() { _ = logger.Sync() }()
	if err := store.Migrate(ctx, cfg.DatabaseURL); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	logger.Info("migrations applied")
	fmt.Fprintln(env.stdout, "migrations applied")
	return nil
}

// parseNoArgs parses flags and refuses positional arguments.
func parseNoArgs(fs *flag.FlagSet, usage string, args []string) error {
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s\n", usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

func loadConfigAndLogger(getenv func(string) string) (Config, *zap.Logger, error) {
	cfg, err := LoadConfig(getenv)
	if err != nil {
		return Config{}, nil, err
	}
	logger, err := newLogger(cfg.Debug)
	if err != nil {
		return Config{}, nil, err
	}
	return cfg, logger, nil
}

func newLogger(debug bool) (*zap.Logger, error) {
	if debug {
		return zap.NewDevelopment()
	}
	return zap.NewProduction()
}

func serve(ctx context.Context, cfg Config, migrateFirst bool, logger *zap.Logger, stdout, stderr io.Writer) error {
	openCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	var st *store.Store
	var err error
	if migrateFirst {
		st, err = store.OpenAndMigrate(openCtx, cfg.DatabaseURL)
	} else {
		st, err = store.Open(openCtx, cfg.DatabaseURL)
	}
	cancel()
	if err != nil {
		if errors.Is(err, store.ErrMigrationsPending) {
			return err // names the command to run
		}
		return fmt.Errorf("open database (DATABASE_URL or DB_URL): %w", err)
	}
	defer st.Close()

	metrics, err := observability.NewMetrics(cfg.MetricsPrefix)
	if err != nil {
		return fmt.Errorf("PROMETHEUS_METRICS_PREFIX: %w", err)
	}
	metrics.SetLabelBounds(cfg.MetricsMaxAgents, cfg.MetricsMaxControls)
	b := currentBuild()
	metrics.SetBuildInfo(b.Version, b.Commit, b.GoVersion)
	// Deferred calls run in reverse: the HTTP server drains first (below), then the pruner and the policy
	// poller stop, then the buffered events are written, then the database closes.
	var rec *observability.Recorder
	if cfg.ObservabilityEnabled {
		rec = observability.NewRecorder(st, observability.RecorderConfig{
			FlushInterval: cfg.FlushInterval, BufferBytes: cfg.BufferBytes, Metrics: metrics, Logger: logger,
			EvaluationWriterShare: cfg.WriterShare,
		})
		defer func() {
			cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := rec.Close(cctx); err != nil {
				logger.Warn("observability events could not all be written", zap.Error(err))
			}
		}()
	}
	// Step capture (GUARD_CAPTURE_AGENTS): nil, and off, unless agents are named. Closed before the
	// database, after the HTTP server has drained.
	capRec, err := capture.New(st, capture.Config{Agents: cfg.CaptureAgents, RedactPaths: cfg.CaptureRedact,
		MaxBytes: cfg.CaptureMaxBytes, MaxAge: cfg.CaptureMaxAge, Logger: logger})
	if err != nil {
		return fmt.Errorf("GUARD_CAPTURE_AGENTS, GUARD_CAPTURE_REDACT: %w", err)
	}
	if capRec != nil {
		logger.Info("step capture is on: evaluated steps of these agents are kept for replay", zap.Strings("agents", capRec.Agents()))
		defer func() {
			cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := capRec.Close(cctx); err != nil {
				logger.Warn("captured steps could not all be written", zap.Error(err))
			}
		}()
	}
	// Approval requests keep their step redacted like captured steps (GUARD_CAPTURE_REDACT).
	approvalRedact, err := capture.ParseRedactPaths(cfg.CaptureRedact)
	if err != nil {
		return fmt.Errorf("GUARD_CAPTURE_REDACT: %w", err)
	}
	stopPruner := observability.StartPruner(context.Background(), st, time.Duration(cfg.RetentionDays)*24*time.Hour, logger)
	defer stopPruner()

	// Spans are flushed after the HTTP server has drained (deferred before srv.Close, so run after it).
	tp, stopTracing, err := startTracing(ctx, cfg.OTel, b.Version, logger)
	if err != nil {
		return err
	}
	defer stopTracing()

	sessions, err := openSessionStore(ctx, &cfg, logger)
	if err != nil {
		return err
	}
	if c, ok := sessions.(interface{ Close() error }); ok {
		defer c.Close()
	}

	opts, err := proxyOptions(&cfg, metrics, logger)
	if err != nil {
		return err
	}
	srv, err := server.New(st, append(opts,
		server.WithSessionStore(sessions),
		server.WithLogger(logger),
		server.WithVersion(version),
		server.WithAuth(cfg.AuthEnabled, cfg.APIKeys, cfg.AdminAPIKeys),
		server.WithKeys(cfg.NamedKeys),
		server.WithMetrics(metrics),
		server.WithObservability(cfg.ObservabilityEnabled, rec),
		server.WithDurableEvents(cfg.ObservabilityDurable),
		server.WithEventReadWait(cfg.ReadWait),
		server.WithUI(ui.Handler()),
		// Cross-site protection: Host is checked when HOST is loopback; GUARD_ALLOWED_ORIGINS adds origins.
		server.WithListenAddr(cfg.Addr()),
		server.WithAllowedOrigins(cfg.AllowedOrigins),
		server.WithAccessLog(cfg.AccessLog),
		server.WithPprof(cfg.Pprof),
		server.WithEvaluationTimeout(cfg.EvaluationTimeout),
		server.WithTracerProvider(tp),
		server.WithCapture(capRec),
		server.WithApprovalWebhook(cfg.ApprovalWebhookURL),
		server.WithApprovalRedact(approvalRedact),
	)...)
	if err != nil {
		return err
	}
	defer srv.Close()
	if cfg.APIKeysFile != "" {
		wctx, stopWatch := context.WithCancel(ctx)
		defer stopWatch()
		go watchKeyFile(wctx, cfg.APIKeysFile, srv, logger)
	}

	ln, err := net.Listen("tcp", cfg.Addr())
	if err != nil {
		return fmt.Errorf("listen on %s (HOST, PORT): %w", cfg.Addr(), err)
	}
	hs := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          zap.NewStdLog(logger.Named("agent_control.http")),
	}
	addr := ln.Addr().String()
	logStartup(ctx, logger, stderr, cfg, st, addr)
	fmt.Fprintf(stdout, "listening on http://%s\n", addr)

	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()

	var serveErr error
	select {
	case err := <-errc:
		serveErr = err
	case <-ctx.Done():
		logger.Info("shutting down", zap.Duration("timeout", shutdownTimeout))
		sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		if err := hs.Shutdown(sctx); err != nil {
			logger.Warn("in-flight requests did not finish in time", zap.Error(err))
			_ = hs.Close()
		}
		cancel()
		<-errc
	}
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	logger.Info("stopped")
	return nil
}
