package promptclassifier

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

	"github.com/guardrail-control/guard/evaluator/internal/retry"
)

// Error is a failure to obtain a classification. Its message names what went wrong (status, timeout,
// malformed answer) but never the API key, the URL or the text.
type Error struct {
	StatusCode int // HTTP status of the last answer, 0 when there was none
	Attempts   int // requests sent
	msg        string
	err        error
	retryable  bool
}

func (e *Error) Error() string {
	s := Name + ": " + e.msg
	if e.Attempts > 1 {
		s += fmt.Sprintf(" (after %d attempts)", e.Attempts)
	}
	return s
}

// Unwrap returns the cause, for instance context.DeadlineExceeded.
func (e *Error) Unwrap() error { return e.err }

// prediction is one label and its score.
type prediction struct {
	Label string  `json:"label"`
	Score float64 `json:"score"`
}

type client struct{ s Settings }

// classify posts the text and returns the predictions, retrying 429, 5xx and network errors with
// jittered exponential backoff while the deadline leaves time.
func (c *client) classify(ctx context.Context, text string) ([]prediction, error) {
	body, err := json.Marshal(map[string]string{"inputs": text})
	if err != nil {
		return nil, &Error{msg: "could not encode the request"}
	}
	var preds []prediction
	var last *Error
	n, stop := c.retryPolicy().Do(ctx, func() retry.Outcome {
		preds, last = c.once(ctx, body)
		return retry.Outcome{OK: last == nil, Retryable: last != nil && last.retryable}
	})
	switch stop {
	case retry.Succeeded:
		return preds, nil
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

func timeoutError(ctx context.Context, attempts int) *Error {
	cause := ctx.Err()
	msg := "no answer from the classifier before the deadline"
	if errors.Is(cause, context.Canceled) {
		msg = "evaluation cancelled before the classifier answered"
	}
	return &Error{msg: msg, err: cause, Attempts: attempts}
}

func (c *client) once(ctx context.Context, body []byte) ([]prediction, *Error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.s.URL, bytes.NewReader(body))
	if err != nil {
		return nil, &Error{msg: "the classifier URL is not valid (check " + EnvURL + ")"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "guard-ext-prompt-injection/"+Version)
	if c.s.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.s.APIKey)
	}
	resp, err := c.s.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, timeoutError(ctx, 0)
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text repeats the URL
		}
		msg := err.Error()
		if c.s.APIKey != "" {
			msg = strings.ReplaceAll(msg, c.s.APIKey, "[redacted]")
		}
		return nil, &Error{msg: "request to the classifier failed: " + msg, retryable: true}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, timeoutError(ctx, 0)
		}
		return nil, &Error{StatusCode: resp.StatusCode, msg: "reading the classifier's answer failed", retryable: true}
	}
	if len(data) > MaxResponseBytes {
		return nil, &Error{StatusCode: resp.StatusCode, msg: fmt.Sprintf("the classifier's answer is larger than %d bytes", MaxResponseBytes)}
	}
	status := fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	switch sc := resp.StatusCode; {
	case sc >= 200 && sc < 300:
		preds, ok := decode(data)
		if !ok {
			return nil, &Error{StatusCode: sc, msg: "the classifier sent a malformed answer (not a list of {label, score})"}
		}
		return preds, nil
	case sc == http.StatusUnauthorized || sc == http.StatusForbidden:
		return nil, &Error{StatusCode: sc, msg: "the classifier rejected the request: " + status + "; check " + EnvAPIKey}
	case sc == http.StatusTooManyRequests || sc >= 500:
		return nil, &Error{StatusCode: sc, msg: "the classifier answered " + status, retryable: true}
	default:
		return nil, &Error{StatusCode: sc, msg: "the classifier answered " + status}
	}
}

// decode reads [{"label","score"}...] or [[{"label","score"}...]] (one list per input; the first is ours).
func decode(data []byte) ([]prediction, bool) {
	var flat []prediction
	if err := json.Unmarshal(data, &flat); err == nil && len(flat) > 0 && flat[0].Label != "" {
		return flat, true
	}
	var nested [][]prediction
	if err := json.Unmarshal(data, &nested); err == nil && len(nested) > 0 && len(nested[0]) > 0 && nested[0][0].Label != "" {
		return nested[0], true
	}
	return nil, false
}
