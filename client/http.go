package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultServerURL is used when neither Config.ServerURL nor GUARD_URL is set.
const DefaultServerURL = "http://localhost:8000"

// DefaultTimeout bounds every HTTP request of an HTTPClient unless WithTimeout or WithHTTPClient says
// otherwise.
const DefaultTimeout = 30 * time.Second

// maxResponseBytes bounds how much of a response body is read.
const maxResponseBytes = 32 << 20

// apiPrefix is the path prefix of every API v1 endpoint except the server-root ones (/health).
const apiPrefix = "/api/v1"

// HTTPClient is a typed client for the REST API v1. It is safe for concurrent use. Methods return
// *APIError for an error response of the server and an error matching ErrUnreachable when the server
// could not be reached (connection refused, DNS, timeout, a reset connection).
type HTTPClient struct {
	base    string // scheme://host[:port][/prefix] without a trailing slash
	apiKey  string
	hc      *http.Client
	timeout time.Duration
	agentUA string
}

// HTTPOption configures an HTTPClient.
type HTTPOption func(*HTTPClient)

// WithTimeout sets the timeout of each request (default 30 s). Zero or negative leaves the default.
func WithTimeout(d time.Duration) HTTPOption {
	return func(c *HTTPClient) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// WithHTTPClient makes the client send requests through hc (transport, proxies, TLS). The per-request
// timeout of WithTimeout still applies, through the request context.
func WithHTTPClient(hc *http.Client) HTTPOption {
	return func(c *HTTPClient) {
		if hc != nil {
			c.hc = hc
		}
	}
}

// WithUserAgent sets the User-Agent header (default "guard-go-client").
func WithUserAgent(ua string) HTTPOption {
	return func(c *HTTPClient) {
		if ua != "" {
			c.agentUA = ua
		}
	}
}

// NewHTTPClient returns a client for the server at baseURL ("" means DefaultServerURL). apiKey, when not
// empty, is sent in the X-API-Key header of every request; it never appears in errors or logs.
func NewHTTPClient(baseURL, apiKey string, opts ...HTTPOption) (*HTTPClient, error) {
	if strings.TrimSpace(baseURL) == "" {
		baseURL = DefaultServerURL
	}
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("guard client: server URL must be an absolute http or https URL")
	}
	if u.User != nil {
		return nil, errors.New("guard client: server URL must not carry credentials; use the API key")
	}
	u.RawQuery, u.Fragment = "", ""
	c := &HTTPClient{
		base:    strings.TrimRight(u.String(), "/"),
		apiKey:  apiKey,
		hc:      http.DefaultClient,
		timeout: DefaultTimeout,
		agentUA: "guard-go-client",
	}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// BaseURL returns the server URL the client talks to.
func (c *HTTPClient) BaseURL() string { return c.base }

// Health is the answer of GET /health.
type Health struct {
	Status  string `json:"status"`
	Version string `json:"version"`
}

// HealthCheck calls GET /health (a public, server-root path).
func (c *HTTPClient) HealthCheck(ctx context.Context) (Health, error) {
	var h Health
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/health", root: true, out: &h})
	return h, err
}

// call describes one request.
type call struct {
	method string
	path   string // under /api/v1 unless root
	root   bool
	query  url.Values
	in     any    // JSON body, nil for none
	raw    []byte // JSON body already encoded, used when in is nil
	out    any    // decoded on 2xx when non-nil
	header http.Header
	// accept304 makes a 304 a success (out is left alone).
	accept304 bool
}

// do sends one request and decodes the answer. It returns the response (body already consumed) on
// success.
func (c *HTTPClient) do(ctx context.Context, cl call) (*http.Response, error) {
	var body io.Reader
	switch {
	case cl.in != nil:
		buf, err := json.Marshal(cl.in)
		if err != nil {
			return nil, fmt.Errorf("guard client: encode request body: %w", err)
		}
		body = bytes.NewReader(buf)
	case cl.raw != nil:
		body = bytes.NewReader(cl.raw)
	}
	target := c.base
	if !cl.root {
		target += apiPrefix
	}
	target += cl.path
	if len(cl.query) > 0 {
		target += "?" + cl.query.Encode()
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, target, body)
	if err != nil {
		return nil, fmt.Errorf("guard client: build request: %w", err)
	}
	for k, vs := range cl.header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	injectTraceContext(ctx, req.Header)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.agentUA)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.apiKey != "" {
		req.Header.Set("X-API-Key", c.apiKey)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, cl, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, c.transportError(ctx, cl, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotModified && cl.accept304:
		return resp, nil
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		if cl.out != nil && len(bytes.TrimSpace(raw)) > 0 {
			if err := json.Unmarshal(raw, cl.out); err != nil {
				return nil, fmt.Errorf("guard client: %s %s: decode response: %w", cl.method, cl.path, err)
			}
		}
		return resp, nil
	default:
		return nil, decodeAPIError(resp, raw)
	}
}

// transportError classifies a failure to get an answer: the caller's own cancellation is returned as is
// (wrapped), anything else is unreachable.
func (c *HTTPClient) transportError(ctx context.Context, cl call, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // drop the URL from the message; the method and path are enough
	}
	if parent := context.Cause(ctx); parent != nil && !errors.Is(parent, context.DeadlineExceeded) {
		return fmt.Errorf("guard client: %s %s: %w", cl.method, cl.path, parent)
	}
	return &unreachableError{method: cl.method, path: cl.path, base: c.base, err: err}
}

// ErrUnreachable is matched (errors.Is) by every error that means the server could not be reached or did
// not answer in time. An *APIError never matches it.
var ErrUnreachable = errors.New("guard server unreachable")

type unreachableError struct {
	method, path, base string
	err                error
}

func (e *unreachableError) Error() string {
	return fmt.Sprintf("guard client: server %s unreachable: %s %s: %v", e.base, e.method, e.path, e.err)
}

func (e *unreachableError) Unwrap() []error { return []error{ErrUnreachable, e.err} }

// IsUnavailable reports whether err means the server is unavailable rather than refusing the request:
// ErrUnreachable, or an *APIError with a 5xx status. The library falls back to its snapshot in both cases.
func IsUnavailable(err error) bool {
	if errors.Is(err, ErrUnreachable) {
		return true
	}
	var ae *APIError
	return errors.As(err, &ae) && ae.Status >= 500
}
