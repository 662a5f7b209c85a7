package promptclassifier

import (
	"context"
	"encoding/json"

	"github.com/guardrail-control/guard/evaluator/internal/extcall"
	"github.com/guardrail-control/guard/evaluator/internal/retry"
)

// Error is a failure to obtain a classification. Its message names what went wrong (status, timeout,
// malformed answer) but never the API key, the URL or the text. StatusCode is the HTTP status of the last
// answer (0 when there was none); Attempts is how many requests were sent.
type Error = extcall.Error

// prediction is one label and its score.
type prediction struct {
	Label string  `json:"label"`
	Score float64 `json:"score"`
}

type client struct {
	s   Settings
	svc *extcall.Service // built once from s
}

// callerFor is how the shared caller reaches the classifier.
func callerFor(s Settings) *extcall.Service {
	return &extcall.Service{
		Evaluator: Name, What: "the classifier", URL: s.URL, APIKey: s.APIKey,
		URLVar: EnvURL, KeyVar: EnvAPIKey, UserAgent: "guard-ext-prompt-injection/" + Version,
		Client:    s.HTTPClient,
		Retry:     retry.Policy{MaxRetries: s.MaxRetries, Base: s.Backoff, Cap: MaxBackoff},
		MaxAnswer: MaxResponseBytes,
	}
}

// classify posts the text and returns the predictions, retrying 429, 5xx and network errors with
// jittered exponential backoff (or the service's Retry-After) while the deadline leaves time.
func (c *client) classify(ctx context.Context, text string) ([]prediction, error) {
	svc := c.svc
	body, err := json.Marshal(map[string]string{"inputs": text})
	if err != nil {
		return nil, svc.Failure(0, "could not encode the request")
	}
	var preds []prediction
	if e := svc.Post(ctx, body, func(data []byte) string {
		var ok bool
		if preds, ok = decode(data); !ok {
			return "the classifier sent a malformed answer (not a list of {label, score})"
		}
		return ""
	}); e != nil {
		return nil, e
	}
	return preds, nil
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
