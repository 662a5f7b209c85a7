package llmproxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// readBody reads r's body up to max bytes: beyond it, 413.
func readBody(r *http.Request, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe) || int64(len(b)) > max:
		return nil, &clientError{status: http.StatusRequestEntityTooLarge, code: "request_too_large",
			msg: fmt.Sprintf("the request body is larger than the proxy's limit (%d bytes)", max)}
	case err != nil:
		return nil, &clientError{status: http.StatusBadRequest, code: "invalid_request_error", msg: "the request body could not be read"}
	}
	return b, nil
}

// decodeObject decodes a JSON object keeping its members' JSON as sent. Names are compared exactly and a
// duplicate name is an error (encoding/json would take the last and match names case-insensitively).
func decodeObject(b []byte, what string) (map[string]jsontext.Value, error) {
	var m map[string]jsontext.Value
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		msg := what + " is not a JSON object"
		if err != nil {
			msg += ": " + err.Error()
		}
		return nil, &clientError{status: http.StatusBadRequest, code: "invalid_request_error", msg: msg}
	}
	return m, nil
}

// member decodes the member name of m into dst when present and not null; a wrong type is a 400 naming it.
func member(m map[string]jsontext.Value, name string, dst any) (bool, error) {
	v, ok := m[name]
	if !ok || v.Kind() == 'n' {
		return false, nil
	}
	if err := json.Unmarshal(v, dst); err != nil {
		return false, &clientError{status: http.StatusBadRequest, code: "invalid_request_error", msg: fmt.Sprintf("%q: %v", name, err)}
	}
	return true, nil
}

// encode marshals v (maps in sorted order).
func encode(v any) []byte {
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		panic("llmproxy: encoding a decoded JSON value failed: " + err.Error())
	}
	return b
}

// hopHeaders are not forwarded either way; guardHeaders are guard's own and never reach the upstream.
var (
	hopHeaders   = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}
	guardHeaders = []string{AgentHeader, SessionHeader, GrantHeader, KeyHeader}
)

// forward sends body to the upstream base+path (path without its /v1) with r's headers (the provider
// key among them, untouched), minus hop-by-hop and guard's headers.
func (p *Proxy) forward(ctx context.Context, base *url.URL, r *http.Request, path string, body []byte) (*http.Response, error) {
	u := *base
	u.Path = base.Path + strings.TrimPrefix(path, "/v1")
	u.RawQuery = r.URL.RawQuery
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = r.Header.Clone()
	for _, h := range hopHeaders {
		req.Header.Del(h)
	}
	for _, h := range guardHeaders {
		req.Header.Del(h)
	}
	// The transport asks for gzip and decompresses it itself: the proxy must read the answer.
	req.Header.Del("Accept-Encoding")
	req.Header.Del("Content-Length")
	req.ContentLength = int64(len(body))
	resp, err := p.http.Do(req)
	if err != nil {
		return nil, upstreamError(ctx, base.Host, err)
	}
	return resp, nil
}

// upstreamError is the answer to a failed upstream call: 504 when it did not answer in time, 502 when it
// could not be reached, naming the upstream's host.
func upstreamError(ctx context.Context, host string, err error) error {
	var ue interface{ Timeout() bool }
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ue) && ue.Timeout() {
		return &clientError{status: http.StatusGatewayTimeout, code: "upstream_timeout",
			msg: fmt.Sprintf("guard proxy: the upstream %s did not answer in time", host)}
	}
	if ctx.Err() == context.Canceled {
		return &clientError{status: 499, code: "client_closed", msg: "the client went away"}
	}
	return &clientError{status: http.StatusBadGateway, code: "upstream_unreachable",
		msg: fmt.Sprintf("guard proxy: the upstream %s could not be reached", host)}
}

// copyHeaders copies an upstream answer's headers except hop-by-hop ones and its length (the proxy may
// change the body).
func copyHeaders(dst, src http.Header) {
	for k, vs := range src {
		dst[k] = append([]string(nil), vs...)
	}
	for _, h := range hopHeaders {
		dst.Del(h)
	}
	dst.Del("Content-Length")
}

// readUpstream reads a non-streamed answer up to max bytes: beyond it, 502.
func readUpstream(resp *http.Response, max int64, host string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, upstreamError(resp.Request.Context(), host, err)
	}
	if int64(len(b)) > max {
		return nil, &clientError{status: http.StatusBadGateway, code: "upstream_too_large",
			msg: fmt.Sprintf("guard proxy: the answer of the upstream %s is larger than the proxy's limit (%d bytes)", host, max)}
	}
	return b, nil
}
