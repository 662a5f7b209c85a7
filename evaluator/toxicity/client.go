package toxicity

import (
	"context"
	"encoding/json"

	"github.com/guardrail-control/guard/evaluator/internal/extcall"
	"github.com/guardrail-control/guard/evaluator/internal/retry"
)

// Error is a failure to obtain a score. Its message names what went wrong (status, timeout, malformed
// answer) but never the API key, the URL or the scored text. StatusCode is the HTTP status of the last
// answer (0 when there was none); Attempts is how many requests were sent.
type Error = extcall.Error

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
	s   Settings
	svc *extcall.Service // built once from s
}

// callerFor is how the shared caller reaches the moderation service.
func callerFor(s Settings) *extcall.Service {
	return &extcall.Service{
		Evaluator: Name, What: "the moderation service", URL: s.URL, APIKey: s.APIKey,
		URLVar: EnvAPIURL, KeyVar: EnvAPIKey, UserAgent: "guard-ext-toxicity/" + Version,
		Client: s.HTTPClient, Retry: retryPolicy(s), MaxAnswer: MaxResponseBytes,
	}
}

// moderate scores text, retrying 429, 5xx and network errors with jittered exponential backoff (or
// the server's Retry-After) while the context's deadline leaves time for another attempt.
func (c *client) moderate(ctx context.Context, text string) (*moderationResponse, error) {
	svc := c.svc
	body, err := json.Marshal(moderationRequest{Input: text, Model: c.s.Model})
	if err != nil {
		return nil, svc.Failure(0, "could not encode the request")
	}
	var r moderationResponse
	if e := svc.Post(ctx, body, func(data []byte) string {
		r = moderationResponse{}
		if json.Unmarshal(data, &r) != nil {
			return "the moderation service sent a malformed response (not the documented JSON)"
		}
		if len(r.Results) == 0 {
			return "the moderation response has no results"
		}
		return ""
	}); e != nil {
		return nil, e
	}
	return &r, nil
}

// retryPolicy is the retry loop's policy from the settings.
func retryPolicy(s Settings) retry.Policy {
	return retry.Policy{MaxRetries: s.MaxRetries, Base: s.Backoff, Cap: MaxBackoff}
}
