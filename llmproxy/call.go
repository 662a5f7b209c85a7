package llmproxy

import (
	"fmt"
	"mime"
	"net/http"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"go.uber.org/zap"
)

// begin resolves the call's agent and session and reads its body as a JSON object.
func (p *Proxy) begin(w http.ResponseWriter, r *http.Request, api string) (*call, map[string]jsontext.Value, error) {
	c, err := p.newCall(r, api)
	if err != nil {
		return nil, nil, err
	}
	// An LLM call may outlast the server's write timeout (60 s in guard serve): the upstream's own bound
	// applies instead; a stream clears the deadline (sseWriter).
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(p.cfg.UpstreamTimeout + time.Minute))
	if c.body, err = readBody(r, p.cfg.MaxRequestBytes); err != nil {
		return nil, nil, err
	}
	top, err := decodeObject(c.body, "the request body")
	if err != nil {
		return nil, nil, err
	}
	return c, top, nil
}

// fail answers err in format f and counts the call's outcome.
func (p *Proxy) fail(w http.ResponseWriter, api string, f errorFormat, err error) {
	ce := asClientError(err)
	outcome := "bad_request"
	switch {
	case ce.block != nil:
		outcome = "refused"
	case ce.code == "upstream_timeout" || ce.code == "upstream_unreachable" || ce.code == "upstream_invalid" || ce.code == "upstream_too_large":
		outcome = "upstream_error"
		p.log.Warn("upstream call failed", zap.String("api", api), zap.String("code", ce.code), zap.String("error", ce.msg))
	case ce.status >= 500:
		outcome = "guard_error"
	}
	p.cfg.Metrics.call(api, outcome)
	if ce.status == 499 {
		return // the client is gone: nobody to answer
	}
	writeError(w, f, ce)
}

// passError hands an upstream's error answer to the client as it is: it is already in the API's format.
func (p *Proxy) passError(w http.ResponseWriter, api string, f errorFormat, resp *http.Response, host string) {
	raw, err := readUpstream(resp, p.cfg.MaxResponseBytes, host)
	if err != nil {
		p.fail(w, api, f, err)
		return
	}
	copyHeaders(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(raw)
	p.cfg.Metrics.call(api, "upstream_status_"+fmt.Sprint(resp.StatusCode/100)+"xx")
}

// isEventStream reports whether resp is a server-sent event stream.
func isEventStream(resp *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt == "text/event-stream"
}

func badRequest(format string, args ...any) error {
	return &clientError{status: http.StatusBadRequest, code: "invalid_request_error", msg: fmt.Sprintf(format, args...)}
}
