package main

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/evaluator/promptclassifier"
	"github.com/guardrail-control/guard/evaluator/toxicity"
	"github.com/guardrail-control/guard/llmproxy"
	"github.com/guardrail-control/guard/server"
	"github.com/guardrail-control/guard/server/capture"
	"github.com/guardrail-control/guard/server/tracing"
)

// Config is the service configuration read from the environment (docs/operations.md, "Environment").
type Config struct {
	DatabaseURL  string
	Host         string
	Port         int
	Debug        bool
	AuthEnabled  bool
	APIKeys      []string
	AdminAPIKeys []string
	// APIKeysFile is GUARD_API_KEYS_FILE, a file of named and scoped keys (docs/operations.md); NamedKeys
	// are its keys, read when the configuration is loaded.
	APIKeysFile          string
	NamedKeys            []server.Key
	ObservabilityEnabled bool
	FlushInterval        time.Duration
	RetentionDays        int
	MetricsPrefix        string
	// MetricsMaxAgents and MetricsMaxControls bound the agent and control labels of /metrics.
	MetricsMaxAgents, MetricsMaxControls int
	AccessLog                            bool
	Pprof                                bool
	// AllowedOrigins (GUARD_ALLOWED_ORIGINS) may call the mutating routes from a browser besides the
	// server's own origin (server.WithAllowedOrigins checks their form).
	AllowedOrigins []string
	// ObservabilityDurable (OBSERVABILITY_DURABLE): posted events are answered 201 once committed.
	ObservabilityDurable bool
	// ReadWait (OBSERVABILITY_READ_WAIT_MS) bounds how long an events query or statistics request waits for
	// the buffered events to be written (0: no wait).
	ReadWait time.Duration
	// BufferBytes (OBSERVABILITY_BUFFER_BYTES) bounds the events buffer's estimated heap.
	BufferBytes int64
	// WriterShare (OBSERVABILITY_WRITER_SHARE) is the share of a core the events writer may keep busy while
	// evaluations record events (observability.RecorderConfig.EvaluationWriterShare); 0 means its default.
	WriterShare float64
	Ext         toxicity.Settings

	// EvaluationTimeout is the deadline of one POST /evaluation (EVALUATION_TIMEOUT_MS).
	EvaluationTimeout time.Duration

	// OTel decides OpenTelemetry trace export (otel.go).
	OTel OTelSettings
	// Step capture for replay (issue 14): the agents whose steps are kept (GUARD_CAPTURE_AGENTS, "*" for
	// all; empty: off), the selector paths redacted before storage, and the bounds of the stored steps.
	CaptureAgents   []string
	CaptureRedact   []string
	CaptureMaxBytes int64
	CaptureMaxAge   time.Duration
	// ApprovalWebhookURL (GUARD_APPROVAL_WEBHOOK_URL) receives new approval requests (docs/approvals.md).
	ApprovalWebhookURL string

	// Session state (docs/control-language.md, "Sessions"): "" keeps it in memory; redis://... shares it
	// between replicas (GUARD_SESSION_STORE), under keys starting with SessionPrefix, idle sessions
	// expiring after SessionTTL.
	SessionStore  string
	SessionPrefix string
	SessionTTL    time.Duration

	// The LLM API proxy in guard serve (docs/proxy.md): served when Proxy is true, on the upstreams'
	// base URLs, with DefaultAgent for calls that name none and the stream windows' sizes.
	Proxy                             bool
	ProxyOpenAIURL, ProxyAnthropicURL string
	ProxyDefaultAgent                 string
	ProxyFailOpen                     bool
	ProxyWindow, ProxyOverlap         int

	// HostExplicit says HOST was set: the default host depends on authentication, and an explicit
	// non-loopback host with authentication off earns a warning at start.
	HostExplicit bool
}

// envVar is one environment variable of the service: the single place that declares its name, default
// and description. LoadConfig parses the variables from this table and `guard help` lists it, so a new
// variable is one row here (and a field in Config).
type envVar struct {
	name    string
	aliases []string // older names read when name is unset (DB_URL for DATABASE_URL)
	def     string   // the value used when the variable is unset ("" = none: the field keeps its zero value)
	defText string   // how help shows the default when def alone does not say it (computed defaults)
	desc    string   // one line for `guard help`
	// set parses a non-empty, trimmed value into c. It returns "" when the value is good and otherwise what
	// the value must be ("a boolean (true or false)"); the error then names the variable, never the value.
	set func(c *Config, v string) (want string)
}

// envVars is the table of every environment variable the service reads, in the order help lists them.
var envVars = []envVar{
	{name: "DATABASE_URL", aliases: []string{"DB_URL"}, def: "guard.db",
		desc: "the database: postgres://user:pass@host/db (PostgreSQL), sqlite:///abs/path.db, a file: URI or a file path (SQLite)",
		set: func(c *Config, v string) string {
			c.DatabaseURL = v
			if !supportedDatabaseURL(v) {
				return databaseURLForms
			}
			return ""
		}},
	{name: "HOST", defText: "127.0.0.1 (0.0.0.0 when GUARD_API_KEY_ENABLED=true)",
		desc: "the interface to listen on; other than loopback with authentication off logs a warning",
		set: func(c *Config, v string) string {
			c.Host, c.HostExplicit = v, true
			return ""
		}},
	{name: "PORT", def: "8000", desc: "the TCP port to listen on (0 picks a free port)",
		set: func(c *Config, v string) string {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 65535 {
				return "a port number from 0 to 65535 (0 picks a free port)"
			}
			c.Port = n
			return ""
		}},
	{name: "DEBUG", def: "false", desc: "human-readable debug logs (zap development logger) instead of JSON at info",
		set: boolField(func(c *Config) *bool { return &c.Debug })},
	{name: "GUARD_API_KEY_ENABLED", def: "false", desc: "require an API key (X-API-Key) on every non-public route",
		set: boolField(func(c *Config) *bool { return &c.AuthEnabled })},
	{name: "GUARD_API_KEYS", desc: "comma-separated regular keys: runtime and read routes",
		set: func(c *Config, v string) string { c.APIKeys = splitList(v); return "" }},
	{name: "GUARD_ADMIN_API_KEYS", desc: "comma-separated admin keys: every route",
		set: func(c *Config, v string) string { c.AdminAPIKeys = splitList(v); return "" }},
	{name: "GUARD_API_KEYS_FILE", desc: "a JSON file of named keys, by plaintext or SHA-256, admin or not, limited to agents or not (docs/operations.md)",
		set: func(c *Config, v string) string { c.APIKeysFile = v; return "" }},
	{name: "GUARD_ALLOWED_ORIGINS", desc: "comma-separated origins (scheme://host[:port]) whose pages may call the mutating routes",
		set: func(c *Config, v string) string { c.AllowedOrigins = splitList(v); return "" }},
	{name: "GUARD_ACCESS_LOG", def: "true", desc: "log one line per request (info; /health, /ready and /metrics at debug)",
		set: boolField(func(c *Config) *bool { return &c.AccessLog })},
	{name: "GUARD_PPROF", def: "false", desc: "serve /debug/pprof/* to admin keys (404 when off)",
		set: boolField(func(c *Config) *bool { return &c.Pprof })},
	{name: "EVALUATION_TIMEOUT_MS", def: strconv.FormatInt(guard.DefaultEvaluationTimeout.Milliseconds(), 10),
		desc: "deadline of one POST /evaluation; controls not run by then are evaluator errors (their on_error decides)",
		set: func(c *Config, v string) string {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || time.Duration(n)*time.Millisecond > maxEvaluationTimeout {
				return fmt.Sprintf("a whole number of milliseconds from 1 to %d (below the HTTP write timeout)", maxEvaluationTimeout.Milliseconds())
			}
			c.EvaluationTimeout = time.Duration(n) * time.Millisecond
			return ""
		}},
	{name: "GUARD_CAPTURE_AGENTS", desc: "comma-separated agent names whose evaluated steps are kept for replay (* for every agent); unset: nothing is kept",
		set: func(c *Config, v string) string {
			c.CaptureAgents = splitList(v)
			for _, a := range c.CaptureAgents {
				if _, err := guard.NormalizeAgentName(a); err != nil && a != "*" {
					return "a comma-separated list of agent names, or *"
				}
			}
			return ""
		}},
	{name: "GUARD_CAPTURE_REDACT", desc: "comma-separated selector paths (input.x, output.x, context.x; * for any key) replaced by [REDACTED] before a step is kept",
		set: func(c *Config, v string) string {
			c.CaptureRedact = splitList(v)
			if _, err := capture.ParseRedactPaths(c.CaptureRedact); err != nil {
				return "a comma-separated list of paths starting with input, output or context"
			}
			return ""
		}},
	{name: "GUARD_APPROVAL_WEBHOOK_URL", desc: "http(s) URL that receives a Slack-compatible JSON POST when an approval request opens (retried, never delaying an evaluation)",
		set: func(c *Config, v string) string {
			u, err := url.Parse(v)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return "an http or https URL"
			}
			c.ApprovalWebhookURL = v
			return ""
		}},
	{name: "GUARD_CAPTURE_MAX_BYTES", def: "268435456", desc: "bound of the kept steps' JSON in bytes (256 MiB); the oldest go first",
		set: func(c *Config, v string) string {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1<<20 || n > 1<<40 {
				return "a whole number of bytes from 1048576 (1 MiB) to 1099511627776 (1 TiB)"
			}
			c.CaptureMaxBytes = n
			return ""
		}},
	{name: "GUARD_CAPTURE_MAX_AGE_HOURS", def: "168", desc: "kept steps older than this are deleted (7 days)",
		set: func(c *Config, v string) string {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 24*366 {
				return "a whole number of hours from 1 to 8784"
			}
			c.CaptureMaxAge = time.Duration(n) * time.Hour
			return ""
		}},
	{name: "GUARD_SESSION_STORE", desc: "where session state lives: unset or memory (this process), or redis://[user:pass@]host:port[/db] (rediss:// for TLS) to share it between replicas",
		set: func(c *Config, v string) string {
			if v == "memory" {
				return ""
			}
			if !strings.HasPrefix(v, "redis://") && !strings.HasPrefix(v, "rediss://") {
				return "memory, or a URL redis://host:port[/db] or rediss://..."
			}
			c.SessionStore = v
			return ""
		}},
	{name: "GUARD_SESSION_PREFIX", def: "guard:", desc: "prefix of the Redis keys of session state (replicas of one deployment share it)",
		set: func(c *Config, v string) string { c.SessionPrefix = v; return "" }},
	{name: "GUARD_SESSION_TTL_SECONDS", def: "3600", desc: "a session idle for longer is forgotten",
		set: func(c *Config, v string) string {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 31*24*3600 {
				return "a whole number of seconds from 1 to 2678400 (31 days)"
			}
			c.SessionTTL = time.Duration(n) * time.Second
			return ""
		}},
	{name: "OBSERVABILITY_ENABLED", def: "true", desc: "record an event per evaluated control and serve the observability API",
		set: boolField(func(c *Config) *bool { return &c.ObservabilityEnabled })},
	{name: "OBSERVABILITY_DURABLE", def: "false", desc: "answer posted events 201 only once they are committed (else 202 from the buffer)",
		set: boolField(func(c *Config) *bool { return &c.ObservabilityDurable })},
	{name: "OBSERVABILITY_BUFFER_BYTES", def: "67108864", desc: "bound of the events buffer in bytes (64 MiB); posted events that do not fit get 503",
		set: func(c *Config, v string) string {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1<<20 || n > 1<<40 {
				return "a whole number of bytes from 1048576 (1 MiB) to 1099511627776 (1 TiB)"
			}
			c.BufferBytes = n
			return ""
		}},
	{name: "OBSERVABILITY_WRITER_SHARE", def: "0.2", desc: "share of a core the events writer may keep busy while evaluations record events (1: no limit); past it, events are dropped and counted rather than slowing evaluations",
		set: func(c *Config, v string) string {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !(f >= 0.05 && f <= 1) {
				return "a number from 0.05 to 1"
			}
			c.WriterShare = f
			return ""
		}},
	{name: "OBSERVABILITY_FLUSH_INTERVAL_SECONDS", def: "10", desc: "how often buffered events are written to the database",
		set: func(c *Config, v string) string {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !(f > 0 && f <= 3600) {
				return "a number of seconds greater than 0 and at most 3600"
			}
			c.FlushInterval = time.Duration(f * float64(time.Second))
			return ""
		}},
	{name: "OBSERVABILITY_READ_WAIT_MS", def: "2000", desc: "how long an events query or statistics request waits at most for the events this server buffered to be written, so that it reads its own writes (0: no wait)",
		set: func(c *Config, v string) string {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 30000 {
				return "a whole number of milliseconds from 0 to 30000"
			}
			c.ReadWait = time.Duration(n) * time.Millisecond
			return ""
		}},
	{name: "OBSERVABILITY_RETENTION_DAYS", def: "30", desc: "events older than this are deleted",
		set: func(c *Config, v string) string {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 36500 {
				return "a whole number of days from 1 to 36500"
			}
			c.RetentionDays = n
			return ""
		}},
	{name: "PROMETHEUS_METRICS_PREFIX", def: "guard", desc: "prefix of guard's own metric names at /metrics",
		set: func(c *Config, v string) string { c.MetricsPrefix = v; return "" }},
	{name: "GUARD_METRICS_MAX_AGENTS", def: "100", desc: "agents with series of their own in the per-agent metrics; the others are counted as agent=\"_other\"",
		set: func(c *Config, v string) string { return labelBound(&c.MetricsMaxAgents, v) }},
	{name: "GUARD_METRICS_MAX_CONTROLS", def: "500", desc: "controls with series of their own in the per-control metrics; the others are counted as control_id=\"_other\"",
		set: func(c *Config, v string) string { return labelBound(&c.MetricsMaxControls, v) }},
	{name: toxicity.EnvAPIKey, desc: "bearer token of the moderation service; enables the ext.toxicity evaluator",
		set: func(c *Config, v string) string { c.Ext.APIKey = v; return "" }},
	{name: toxicity.EnvAPIURL, defText: toxicity.DefaultURL, desc: "the moderation endpoint (any OpenAI-compatible one)",
		set: func(c *Config, v string) string { c.Ext.URL = v; return "" }},
	{name: toxicity.EnvAPIModel, desc: "the model field sent to the moderation service (default: the service's)",
		set: func(c *Config, v string) string { c.Ext.Model = v; return "" }},
	{name: promptclassifier.EnvURL, desc: "endpoint of a prompt-injection classifier you run (Hugging Face text-classification protocol); enables the ext.prompt_injection evaluator",
		set: func(c *Config, v string) string {
			if err := (promptclassifier.Settings{URL: v}).Check(); err != nil {
				return "an http(s) URL"
			}
			return ""
		}},
	{name: promptclassifier.EnvAPIKey, desc: "bearer token sent to the prompt-injection classifier (optional)",
		set: func(c *Config, v string) string { return "" }},
	{name: "GUARD_OTEL", defText: "on when an OTLP endpoint is set", desc: "export an OpenTelemetry span per evaluation over OTLP: true, false, or unset to follow the endpoint (docs/tracing.md)",
		set: func(c *Config, v string) string {
			b, err := parseBool(v)
			if err != nil {
				return "a boolean (true or false)"
			}
			c.OTel.Switch = &b
			return ""
		}},
	{name: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", aliases: []string{"OTEL_EXPORTER_OTLP_ENDPOINT"}, defText: "http://localhost:4318, grpc: 4317 (when GUARD_OTEL=true)",
		desc: "the OTLP collector; setting it turns export on. The SDK also reads OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _COMPRESSION, OTEL_TRACES_SAMPLER",
		set:  setOTLPEndpoint},
	{name: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", aliases: []string{"OTEL_EXPORTER_OTLP_PROTOCOL"}, def: tracing.ProtocolHTTPProtobuf, desc: "the OTLP transport: http/protobuf or grpc",
		set: func(c *Config, v string) string { c.OTel.Protocol = v; return "" }},
	{name: "OTEL_SERVICE_NAME", defText: "guard", desc: "service.name of guard's spans (the SDK reads it, and OTEL_RESOURCE_ATTRIBUTES)",
		set: func(*Config, string) string { return "" }},
	{name: "GUARD_PROXY", def: "false", desc: "serve the LLM API proxy (POST /v1/chat/completions, /v1/messages, the gateway guardrail routes; docs/proxy.md) behind a runtime key in X-Guard-Key",
		set: boolField(func(c *Config) *bool { return &c.Proxy })},
	{name: "GUARD_PROXY_OPENAI_URL", def: llmproxy.DefaultOpenAIBaseURL, desc: "the proxy's upstream for the OpenAI API (any OpenAI-compatible server's /v1)",
		set: func(c *Config, v string) string { c.ProxyOpenAIURL = v; return "" }},
	{name: "GUARD_PROXY_ANTHROPIC_URL", def: llmproxy.DefaultAnthropicBaseURL, desc: "the proxy's upstream for the Anthropic API",
		set: func(c *Config, v string) string { c.ProxyAnthropicURL = v; return "" }},
	{name: "GUARD_PROXY_DEFAULT_AGENT", desc: "the agent of proxied calls that name none in X-Guard-Agent (and whose key is not limited to one agent)",
		set: func(c *Config, v string) string { c.ProxyDefaultAgent = v; return "" }},
	{name: "GUARD_PROXY_WINDOW", def: strconv.Itoa(llmproxy.DefaultWindow), desc: "bytes of streamed text the proxy checks at once",
		set: intRange(func(c *Config) *int { return &c.ProxyWindow }, 16, 1<<20)},
	{name: "GUARD_PROXY_OVERLAP", def: strconv.Itoa(llmproxy.DefaultOverlap), desc: "bytes of each checked window carried into the next (below GUARD_PROXY_WINDOW)",
		set: intRange(func(c *Config) *int { return &c.ProxyOverlap }, 0, 1<<20)},
	{name: "OTEL_SDK_DISABLED", def: "false", desc: "true turns OpenTelemetry export off whatever else is set",
		set: boolField(func(c *Config) *bool { return &c.OTel.SDKDisabled })},
}

// intRange is the parser of a whole number in [lo, hi] stored at field(c).
func intRange(field func(*Config) *int, lo, hi int) func(*Config, string) string {
	return func(c *Config, v string) string {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			return fmt.Sprintf("a whole number from %d to %d", lo, hi)
		}
		*field(c) = n
		return ""
	}
}

// boolField is the parser of a boolean variable stored at field(c).
func boolField(field func(*Config) *bool) func(*Config, string) string {
	return func(c *Config, v string) string {
		b, err := parseBool(v)
		if err != nil {
			return "a boolean (true or false)"
		}
		*field(c) = b
		return ""
	}
}

// lookup returns the value of ev (trimmed), reading its aliases when it is unset, and the name it came from.
func (ev *envVar) lookup(getenv func(string) string) (value, from string) {
	for _, n := range append([]string{ev.name}, ev.aliases...) {
		if v := strings.TrimSpace(getenv(n)); v != "" {
			return v, n
		}
	}
	return "", ev.name
}

// maxEvaluationTimeout keeps the evaluation deadline below the HTTP server's write timeout (60 s, see
// serve), with time left to write the answer: past the write timeout the client gets no answer at all.
const maxEvaluationTimeout = 55 * time.Second

// Addr is the listen address host:port.
func (c Config) Addr() string { return joinHostPort(c.Host, c.Port) }

// ExposedWithoutAuth reports whether the server listens beyond loopback with authentication off.
func (c Config) ExposedWithoutAuth() bool { return !c.AuthEnabled && !isLoopbackHost(c.Host) }

// isLoopbackHost reports whether host only reaches this machine (localhost, 127.0.0.0/8, ::1).
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

func joinHostPort(host string, port int) string {
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(port)
}

// LoadConfig reads the configuration through getenv (os.Getenv in main, a map in tests), variable by
// variable from envVars. A malformed value is an error naming the variable; the value itself is not
// repeated (it may be a secret).
func LoadConfig(getenv func(string) string) (Config, error) {
	var c Config
	var errs []string
	for i := range envVars {
		ev := &envVars[i]
		v, from := ev.lookup(getenv)
		if v == "" {
			v = ev.def
		}
		if v == "" {
			continue
		}
		if want := ev.set(&c, v); want != "" {
			errs = append(errs, fmt.Sprintf("%s must be %s", from, want))
		}
	}
	if !c.HostExplicit {
		c.Host = "127.0.0.1" // local development: nothing beyond this machine reaches an open server
		if c.AuthEnabled {
			c.Host = "0.0.0.0"
		}
	}
	if err := c.Ext.Check(); err != nil {
		errs = append(errs, err.Error())
	}
	if want := c.OTel.check(); want != "" {
		errs = append(errs, want)
	}
	if c.APIKeysFile != "" {
		keys, err := readKeyFile(c.APIKeysFile)
		if err != nil {
			errs = append(errs, err.Error())
		}
		c.NamedKeys = keys
	}
	if c.AuthEnabled && len(c.APIKeys) == 0 && len(c.AdminAPIKeys) == 0 && len(c.NamedKeys) == 0 {
		errs = append(errs, "GUARD_API_KEY_ENABLED is true but none of GUARD_API_KEYS, GUARD_ADMIN_API_KEYS and GUARD_API_KEYS_FILE holds a key")
	}
	if len(errs) > 0 {
		return c, fmt.Errorf("invalid configuration: %s", strings.Join(errs, "; "))
	}
	return c, nil
}

const databaseURLForms = "a postgres://, postgresql:// or sqlite:// URL, a file: URI or a file path"

// supportedDatabaseURL reports whether v has a form the store can open: a URL with a scheme it knows, or a
// path (no scheme). The store checks the rest when it opens the database.
func supportedDatabaseURL(v string) bool {
	scheme, _, hasScheme := strings.Cut(v, "://")
	if !hasScheme {
		return true // a bare path or a file: URI
	}
	switch strings.ToLower(scheme) {
	case "postgres", "postgresql", "sqlite":
		return true
	}
	return false
}

// parseBool accepts true/false, 1/0, yes/no and on/off, in any case.
func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true", "1", "yes", "on":
		return true, nil
	case "false", "0", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("not a boolean")
}

// splitList splits a comma-separated list, dropping blanks.
func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// labelBound reads a metrics label bound: 1 to 100000 (each value is a few series in every scrape).
func labelBound(dst *int, v string) string {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 100000 {
		return "a whole number from 1 to 100000"
	}
	*dst = n
	return ""
}
