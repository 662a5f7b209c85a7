package llmproxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"

	guard "github.com/guardrail-control/guard"
)

// Headers a client sets to tell guard who calls. They are guard's own: never forwarded upstream.
const (
	// AgentHeader names the agent whose controls apply (else Config.DefaultAgent or the key's scope).
	AgentHeader = "X-Guard-Agent"
	// SessionHeader is the session id of the call (step.context.session_id), so that session controls
	// (Rule of Two, budgets, loops) see the calls of one conversation together.
	SessionHeader = "X-Guard-Session"
	// GrantHeader carries an approval grant (GET /api/v1/approvals/{id} once approved): the steps of the
	// call present it as step.context.guard_approval_grant.
	GrantHeader = "X-Guard-Approval-Grant"
	// KeyHeader carries the guard API key on the proxy routes of `guard serve` (X-API-Key and
	// Authorization belong to the provider there).
	KeyHeader = "X-Guard-Key"
)

// Defaults of Config.
const (
	DefaultWindow           = 1024
	DefaultOverlap          = 256
	DefaultMaxRequestBytes  = 8 << 20
	DefaultMaxResponseBytes = 32 << 20
	DefaultUpstreamTimeout  = 10 * time.Minute
	DefaultHeaderTimeout    = 2 * time.Minute
)

// Default upstream base URLs.
const (
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
	DefaultAnthropicBaseURL = "https://api.anthropic.com/v1"
)

// Config configures a Proxy. Checker is required; the rest has defaults.
type Config struct {
	// OpenAIBaseURL is the upstream of /v1/chat/completions: its path after /v1 is appended to it
	// (https://api.openai.com/v1, http://localhost:11434/v1 for Ollama, a vLLM or LiteLLM server's /v1).
	OpenAIBaseURL string
	// AnthropicBaseURL is the upstream of /v1/messages (https://api.anthropic.com/v1).
	AnthropicBaseURL string
	// Checker evaluates the steps.
	Checker Checker
	// DefaultAgent is the agent of calls that name none in AgentHeader.
	DefaultAgent string
	// ResolveAgent, when set, decides the agent from the request and the name in AgentHeader (""
	// when absent): `guard serve` uses the key's scope. The default takes the header, else DefaultAgent.
	ResolveAgent func(r *http.Request, named string) (string, error)
	// FailOpen lets a call through unchecked when the guard server cannot be reached (ErrUnavailable);
	// by default such a call is refused (503 guard_unavailable). Either way it is logged and counted.
	FailOpen bool
	// Window and Overlap are the bytes of streamed text checked at once and carried into the next window
	// (defaults 1024 and 256; Overlap < Window).
	Window, Overlap int
	// MaxRequestBytes bounds a request body, MaxResponseBytes a non-streamed answer and what a stream
	// assembles (tool-call arguments, the answer's text kept for the final check).
	MaxRequestBytes, MaxResponseBytes int64
	// UpstreamTimeout bounds a non-streamed call; HeaderTimeout the wait for a streamed answer's headers.
	UpstreamTimeout, HeaderTimeout time.Duration
	// Transport reaches the upstreams (default: a clone of http.DefaultTransport).
	Transport http.RoundTripper
	// Logger logs refusals and faults, never headers or bodies (default: none).
	Logger *zap.Logger
	// Metrics, when set, counts calls and steps (NewMetrics).
	Metrics *Metrics
}

// Proxy is the LLM API proxy. It implements http.Handler for the routes of Routes.
type Proxy struct {
	cfg       Config
	openai    *url.URL
	anthropic *url.URL
	http      *http.Client
	log       *zap.Logger
	mux       *http.ServeMux
}

// Route paths the proxy serves.
const (
	PathChatCompletions = "/v1/chat/completions"
	PathMessages        = "/v1/messages"
	PathLiteLLM         = "/beta/litellm_basic_guardrail_api"
)

// Routes lists the method and path of every route the proxy serves.
func Routes() []string {
	return []string{"POST " + PathChatCompletions, "POST " + PathMessages, "POST " + PathLiteLLM}
}

// IsRoute reports whether path is one of the proxy's routes.
func IsRoute(path string) bool {
	return path == PathChatCompletions || path == PathMessages || path == PathLiteLLM
}

// New returns a Proxy over cfg.
func New(cfg Config) (*Proxy, error) {
	if cfg.Checker == nil {
		return nil, errors.New("llmproxy: a Checker is required")
	}
	if cfg.OpenAIBaseURL == "" {
		cfg.OpenAIBaseURL = DefaultOpenAIBaseURL
	}
	if cfg.AnthropicBaseURL == "" {
		cfg.AnthropicBaseURL = DefaultAnthropicBaseURL
	}
	if cfg.Window == 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.Overlap == 0 && cfg.Window > DefaultOverlap {
		cfg.Overlap = DefaultOverlap
	}
	if cfg.Window < 16 || cfg.Overlap < 0 || cfg.Overlap >= cfg.Window {
		return nil, fmt.Errorf("llmproxy: the window must be at least 16 bytes and the overlap in [0, window): got %d and %d", cfg.Window, cfg.Overlap)
	}
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.UpstreamTimeout <= 0 {
		cfg.UpstreamTimeout = DefaultUpstreamTimeout
	}
	if cfg.HeaderTimeout <= 0 {
		cfg.HeaderTimeout = DefaultHeaderTimeout
	}
	if cfg.DefaultAgent != "" {
		n, err := guard.NormalizeAgentName(cfg.DefaultAgent)
		if err != nil {
			return nil, fmt.Errorf("llmproxy: the default agent: %w", err)
		}
		cfg.DefaultAgent = n
	}
	p := &Proxy{cfg: cfg, log: cfg.Logger}
	if p.log == nil {
		p.log = zap.NewNop()
	}
	var err error
	if p.openai, err = parseBase(cfg.OpenAIBaseURL); err != nil {
		return nil, fmt.Errorf("llmproxy: the OpenAI base URL: %w", err)
	}
	if p.anthropic, err = parseBase(cfg.AnthropicBaseURL); err != nil {
		return nil, fmt.Errorf("llmproxy: the Anthropic base URL: %w", err)
	}
	tr := cfg.Transport
	if tr == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.ResponseHeaderTimeout = cfg.HeaderTimeout
		t.MaxIdleConnsPerHost = 256
		tr = t
	}
	// No client timeout: a stream lasts as long as the model writes; non-streamed calls get a context
	// deadline (UpstreamTimeout) and the transport bounds the wait for headers.
	p.http = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	p.mux = http.NewServeMux()
	p.mux.HandleFunc("POST "+PathChatCompletions, p.chatCompletions)
	p.mux.HandleFunc("POST "+PathMessages, p.messages)
	p.mux.HandleFunc("POST "+PathLiteLLM, p.litellm)
	return p, nil
}

func parseBase(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSuffix(raw, "/"))
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http(s) URL", raw)
	}
	return u, nil
}

// ServeHTTP implements http.Handler.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) { p.mux.ServeHTTP(w, r) }

// call is what the steps of one proxied call share.
type call struct {
	r       *http.Request
	api     string // the API's name in metrics and step names: openai.chat.completions, anthropic.messages
	agent   string
	session string
	grant   string
	model   string
	body    []byte // the request body as received
}

// newCall resolves the agent and session of r; the error is a client error (400/404).
func (p *Proxy) newCall(r *http.Request, api string) (*call, error) {
	named := r.Header.Get(AgentHeader)
	var agent string
	var err error
	if p.cfg.ResolveAgent != nil {
		agent, err = p.cfg.ResolveAgent(r, named)
	} else {
		agent = named
		if agent == "" {
			agent = p.cfg.DefaultAgent
		}
		if agent == "" {
			err = fmt.Errorf("no agent: name one in the %s header", AgentHeader)
		}
	}
	if err != nil {
		return nil, &clientError{status: http.StatusBadRequest, code: "guard_no_agent", msg: err.Error()}
	}
	if agent, err = guard.NormalizeAgentName(agent); err != nil {
		return nil, &clientError{status: http.StatusBadRequest, code: "guard_bad_agent", msg: AgentHeader + ": " + err.Error()}
	}
	c := &call{r: r, api: api, agent: agent, session: r.Header.Get(SessionHeader), grant: r.Header.Get(GrantHeader)}
	if len(c.session) > guard.MaxSessionIDBytes {
		return nil, &clientError{status: http.StatusBadRequest, code: "guard_bad_session",
			msg: fmt.Sprintf("%s must be at most %d bytes", SessionHeader, guard.MaxSessionIDBytes)}
	}
	return c, nil
}

// stepContext is the context of a step of c; withSession adds the session id (the steps of record, not
// the intermediate windows of a stream, so that session counters count each answer once).
func (c *call) stepContext(withSession bool) map[string]any {
	m := map[string]any{"api": c.api}
	if c.model != "" {
		m["model"] = c.model
	}
	if withSession && c.session != "" {
		m["session_id"] = c.session
	}
	if c.grant != "" {
		m[grantContextKey] = c.grant
	}
	return m
}

// grantContextKey is the key of step.context an approval grant is presented under (server.GrantContextKey).
const grantContextKey = "guard_approval_grant"

// clientError is an error answered in the API's own format with its status and code.
type clientError struct {
	status int
	code   string
	msg    string
	block  *Block // set for refusals by a control
}

func (e *clientError) Error() string { return e.msg }

// upstreamContext bounds a non-streamed call.
func (p *Proxy) upstreamContext(ctx context.Context, stream bool) (context.Context, context.CancelFunc) {
	if stream {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, p.cfg.UpstreamTimeout)
}
