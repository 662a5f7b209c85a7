// Package extcall is what the external evaluators (ext.toxicity, ext.prompt_injection) share to reach the
// HTTP service an operator runs: one JSON POST with a bearer token, a bounded answer, statuses sorted into
// retryable and final, retries under the evaluation's deadline, and errors that never repeat the key, the
// URL or the text. Each evaluator keeps its own request and answer shapes.
package extcall

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

// Service says where and how to call one external service, and how messages name it.
type Service struct {
	Evaluator string // the evaluator's name, which starts every error message ("ext.toxicity")
	What      string // how messages name the service ("the moderation service")
	URL       string
	APIKey    string // sent as "Authorization: Bearer <APIKey>" when not empty; never in errors
	URLVar    string // the setting named when the URL is unusable
	KeyVar    string // the setting named when the service refuses the key
	UserAgent string
	Client    *http.Client
	Retry     retry.Policy
	MaxAnswer int // bytes; a larger answer is an error
}

// Error is a failure to obtain an answer. Its message names what went wrong (status, timeout, malformed
// answer) but never the API key, the URL or the text sent.
type Error struct {
	// StatusCode is the HTTP status of the last answer, or 0 when there was none (network error,
	// timeout).
	StatusCode int
	// Attempts is how many requests were sent.
	Attempts int

	evaluator  string
	msg        string
	err        error // the cause callers may test with errors.Is (context errors)
	retryable  bool
	retryAfter time.Duration // the service's Retry-After, when it sent one
	hasAfter   bool
}

// Error implements the error interface.
func (e *Error) Error() string {
	s := e.evaluator + ": " + e.msg
	if e.Attempts > 1 {
		s += fmt.Sprintf(" (after %d attempts)", e.Attempts)
	}
	return s
}

// Unwrap returns the cause, for instance context.DeadlineExceeded.
func (e *Error) Unwrap() error { return e.err }

// Failure is an Error about an answer the service did send (status code status) that the evaluator could
// not use, for instance a malformed body.
func (s *Service) Failure(status int, msg string) *Error {
	return &Error{evaluator: s.Evaluator, StatusCode: status, msg: msg}
}

// Post sends body, retrying 429, 5xx and network errors with jittered exponential backoff (or the
// service's Retry-After) while ctx's deadline leaves time, and returns a 2xx answer's body after decode
// accepted it. decode returns "" for a usable body, else what is wrong with it (a final error).
func (s *Service) Post(ctx context.Context, body []byte, decode func(data []byte) (problem string)) *Error {
	var last *Error
	n, stop := s.Retry.Do(ctx, func() retry.Outcome {
		last = s.once(ctx, body, decode)
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
		return nil
	case retry.Interrupted:
		return s.timeout(ctx, n)
	case retry.NoTimeLeft:
		last.msg += "; no time left to retry before the deadline"
	}
	last.Attempts = n
	return last
}

// timeout reports that ctx ended before an answer arrived.
func (s *Service) timeout(ctx context.Context, attempts int) *Error {
	cause := ctx.Err()
	msg := "no answer from " + s.What + " before the deadline"
	if errors.Is(cause, context.Canceled) {
		msg = "evaluation cancelled before " + s.What + " answered"
	}
	return &Error{evaluator: s.Evaluator, msg: msg, err: cause, Attempts: attempts}
}

// once sends one request and sorts its outcome.
func (s *Service) once(ctx context.Context, body []byte, decode func([]byte) string) *Error {
	fail := func(status int, msg string, retryable bool) *Error {
		return &Error{evaluator: s.Evaluator, StatusCode: status, msg: msg, retryable: retryable}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader(body))
	if err != nil {
		return fail(0, "the URL of "+s.What+" is not valid (check "+s.URLVar+")", false)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", s.UserAgent)
	if s.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+s.APIKey)
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return s.timeout(ctx, 0)
		}
		return fail(0, "request to "+s.What+" failed: "+s.redact(networkCause(err).Error()), true)
	}
	defer resp.Body.Close()
	sc := resp.StatusCode
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(s.MaxAnswer)+1))
	if err != nil {
		if ctx.Err() != nil {
			return s.timeout(ctx, 0)
		}
		return fail(sc, "reading the answer of "+s.What+" failed", true)
	}
	if len(data) > s.MaxAnswer {
		return fail(sc, fmt.Sprintf("the answer of %s is larger than %d bytes", s.What, s.MaxAnswer), false)
	}
	status := fmt.Sprintf("%d %s", sc, http.StatusText(sc))
	// The code is repeated only when it does not hold the key: a service may echo the bearer token.
	if code := errorCode(data); code != "" && (s.APIKey == "" || !strings.Contains(code, s.APIKey)) {
		status += " (" + code + ")"
	}
	switch {
	case sc >= 200 && sc < 300:
		if problem := decode(data); problem != "" {
			return fail(sc, problem, false)
		}
		return nil
	case sc == http.StatusUnauthorized || sc == http.StatusForbidden:
		return fail(sc, s.What+" rejected the request: "+status+"; check "+s.KeyVar, false)
	case sc == http.StatusTooManyRequests || sc >= 500:
		e := fail(sc, s.What+" answered "+status, true)
		e.retryAfter, e.hasAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
		return e
	default:
		return fail(sc, s.What+" answered "+status, false)
	}
}

// networkCause strips the *url.Error wrapper, whose text repeats the URL (which may carry credentials).
func networkCause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// redact replaces the API key, should it appear in a message.
func (s *Service) redact(msg string) string {
	if s.APIKey != "" {
		msg = strings.ReplaceAll(msg, s.APIKey, "[redacted]")
	}
	return msg
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

// retryAfter parses a Retry-After header: delay seconds (at most an hour) or an HTTP date.
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
