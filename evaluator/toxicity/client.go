package toxicity

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/guardrail-control/guard/evaluator/internal/retry"
)

// Error is a failure to obtain a score. Its message names what went wrong (status, timeout, malformed
// answer) but never the API key, the URL or the scored text.
type Error struct {
	// StatusCode is the HTTP status of the last answer, or 0 when there was none (network error,
	// timeout) or it was a 2xx with an unusable body.
	StatusCode int
	// Attempts is how many requests were sent.
	Attempts int

	msg        string
	err        error // wrapped cause that callers may test with errors.Is (context errors)
	retryable  bool
	retryAfter time.Duration
	hasAfter   bool
}

// Error implements the error interface.
func (e *Error) Error() string {
	s := "ext.toxicity: " + e.msg
	if e.Attempts > 1 {
		s += fmt.Sprintf(" (after %d attempts)", e.Attempts)
	}
	return s
}

// Unwrap returns the cause, for instance context.DeadlineExceeded.
func (e *Error) Unwrap() error { return e.err }

// moderationRequest is the body of a request to an OpenAI-compatible moderation endpoint.
type moderationRequest struct {
	Input string `json:"input"`
	Model string `json:"model,omitempty"`
}

// moderationResponse is the documented answer; only the fields used here are decoded.
type moderationResponse struct {
	ID      string             `json:"id"`
	Model   string             `json:"model"`
	Results []moderationResult `json:"results"`
}

type moderationResult struct {
	Flagged        bool               `json:"flagged"`
	CategoryScores map[string]float64 `json:"category_scores"`
}

// client sends moderation requests with retries. Its settings have their defaults filled in.
type client struct {
	s Settings
}

// moderate scores text, retrying 429, 5xx and network errors with jittered exponential backoff (or
// the server's Retry-After) while the context's deadline leaves time for another attempt.
func (c *client) moderate(ctx context.Context, text string) (*moderationResponse, error) {
	body, err := json.Marshal(moderationRequest{Input: text, Model: c.s.Model})
	if err != nil {
		return nil, &Error{msg: "could not encode the request"}
	}
	var resp *moderationResponse
	var last *Error
	n, stop := c.retryPolicy().Do(ctx, func() retry.Outcome {
		resp, last = c.once(ctx, body)
		if last == nil {
			return retry.Outcome{OK: true}
		}
		o := retry.Outcome{Retryable: last.retryable}
		if last.hasAfter {
			o.After = max(last.retryAfter, time.Nanosecond) // Retry-After: 0 means at once, not the backoff
		}
		return o
	})
	switch stop {
	case retry.Succeeded:
		return resp, nil
	case retry.Interrupted:
		return nil, timeoutError(ctx, n)
	case retry.NoTimeLeft:
		last.msg += "; no time left to retry before the deadline"
	}
	last.Attempts = n
	return nil, last
}

// retryPolicy is the retry loop's policy from the settings.
func (c *client) retryPolicy() retry.Policy {
	return retry.Policy{MaxRetries: c.s.MaxRetries, Base: c.s.Backoff, Cap: MaxBackoff}
}

// timeoutError reports that ctx ended before an answer arrived.
func timeoutError(ctx context.Context, attempts int) *Error {
	cause := ctx.Err()
	msg := "no answer from the moderation service before the deadline"
	if errors.Is(cause, context.Canceled) {
		msg = "evaluation cancelled before the moderation service answered"
	}
	return &Error{msg: msg, err: cause, Attempts: attempts}
}

// once sends one request and classifies the outcome.
func (c *client) once(ctx context.Context, body []byte) (*moderationResponse, *Error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.s.URL, bytes.NewReader(body))
	if err != nil {
		return nil, &Error{msg: "the moderation URL is not valid (check " + EnvAPIURL + ")"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.s.APIKey)
	req.Header.Set("User-Agent", "guard-ext-toxicity/"+Version)
	resp, err := c.s.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, timeoutError(ctx, 0)
		}
		return nil, &Error{msg: "request to the moderation service failed: " + c.redact(networkCause(err)), retryable: true}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, timeoutError(ctx, 0)
		}
		return nil, &Error{StatusCode: resp.StatusCode, msg: "reading the moderation response failed", retryable: true}
	}
	if len(data) > MaxResponseBytes {
		return nil, &Error{StatusCode: resp.StatusCode, msg: fmt.Sprintf("moderation response is larger than %d bytes", MaxResponseBytes)}
	}
	status := fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	// The code is repeated only when it does not hold the key: a service may echo the bearer token.
	if code := errorCode(data); code != "" && (c.s.APIKey == "" || !strings.Contains(code, c.s.APIKey)) {
		status += " (" + code + ")"
	}
	switch sc := resp.StatusCode; {
	case sc >= 200 && sc < 300:
		return decodeResponse(data, sc)
	case sc == http.StatusUnauthorized || sc == http.StatusForbidden:
		return nil, &Error{StatusCode: sc, msg: "the moderation service rejected the API key: " + status + "; check " + EnvAPIKey}
	case sc == http.StatusTooManyRequests || sc >= 500:
		after, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now())
		return nil, &Error{StatusCode: sc, msg: "the moderation service answered " + status, retryable: true, retryAfter: after, hasAfter: ok}
	default:
		return nil, &Error{StatusCode: sc, msg: "the moderation service answered " + status}
	}
}

// decodeResponse parses a 2xx body.
func decodeResponse(data []byte, status int) (*moderationResponse, *Error) {
	var r moderationResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, &Error{StatusCode: status, msg: "the moderation service sent a malformed response (not the documented JSON)"}
	}
	if len(r.Results) == 0 {
		return nil, &Error{StatusCode: status, msg: "the moderation response has no results"}
	}
	return &r, nil
}

// networkCause strips the *url.Error wrapper, whose text repeats the URL (which may carry credentials).
func networkCause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// redact renders err with the API key, if it somehow appears, replaced.
func (c *client) redact(err error) string {
	s := err.Error()
	if c.s.APIKey != "" {
		s = strings.ReplaceAll(s, c.s.APIKey, "[redacted]")
	}
	return s
}

// identifier matches the short machine codes worth repeating from an error body.
var identifier = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// errorCode returns error.code or error.type of an OpenAI-style error body when it is a short
// identifier; free-text messages are never repeated (they may quote the input).
func errorCode(data []byte) string {
	var body struct {
		Error struct {
			Code any    `json:"code"`
			Type string `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &body) != nil {
		return ""
	}
	if code, ok := body.Error.Code.(string); ok && identifier.MatchString(code) {
		return code
	}
	if identifier.MatchString(body.Error.Type) {
		return body.Error.Type
	}
	return ""
}

// retryAfter parses a Retry-After header: delay seconds or an HTTP date.
func retryAfter(h string, now time.Time) (time.Duration, bool) {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(h, 10, 64); err == nil {
		if n < 0 {
			return 0, false
		}
		if n > int64(time.Hour/time.Second) {
			n = int64(time.Hour / time.Second)
		}
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
