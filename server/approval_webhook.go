package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"

	guard "github.com/guardrail-control/guard"
)

// webhook posts new approval requests to GUARD_APPROVAL_WEBHOOK_URL from one background goroutine: a
// bounded queue (a full queue drops the notice, logged, never slowing an evaluation), and per notice at
// most webhookAttempts tries, retried on a transport error, 429 or 5xx after backoff, 2*backoff, ...
type webhook struct {
	url     string
	log     *zap.Logger
	client  *http.Client
	queue   chan []byte
	backoff time.Duration

	startOnce sync.Once
	wg        sync.WaitGroup
}

const (
	webhookQueue    = 256
	webhookAttempts = 4
	webhookTimeout  = 5 * time.Second
	// webhookStepText bounds the step JSON quoted in the message text.
	webhookStepText = 1500
)

func newWebhook(url string, log *zap.Logger) *webhook {
	return &webhook{url: url, log: log, client: &http.Client{Timeout: webhookTimeout},
		queue: make(chan []byte, webhookQueue), backoff: time.Second}
}

// start runs the sender until ctx ends.
func (h *webhook) start(ctx context.Context) {
	h.startOnce.Do(func() {
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case body := <-h.queue:
					h.send(ctx, body)
				}
			}
		}()
	})
}

// wait returns once the sender has stopped.
func (h *webhook) wait() { h.wg.Wait() }

// webhookBody is Slack-compatible (an incoming webhook reads text and ignores the rest) and carries the
// request for any other receiver in approval.
type webhookBody struct {
	Text     string          `json:"text"`
	Approval webhookApproval `json:"approval"`
}

type webhookApproval struct {
	ID          string          `json:"id"`
	AgentName   string          `json:"agent_name"`
	ControlID   int64           `json:"control_id"`
	ControlName string          `json:"control_name"`
	StepType    string          `json:"step_type"`
	StepName    string          `json:"step_name"`
	Stage       guard.Stage     `json:"stage"`
	PayloadHash string          `json:"payload_hash"`
	Message     string          `json:"message,omitempty"`
	Approvers   []string        `json:"approvers"`
	Step        json.RawMessage `json:"step"`
	// Controls are every control the request covers (several approval controls refusing one step).
	Controls  []guard.ApprovalControl `json:"controls"`
	ExpiresAt time.Time               `json:"expires_at"`
	URL       string                  `json:"url"`
}

func (h *webhook) enqueue(rec *guard.ApprovalRecord) {
	step := string(rec.Step)
	if len(step) > webhookStepText {
		step = step[:webhookStepText] + "..."
	}
	text := fmt.Sprintf("guard: agent `%s` asks to run %s `%s` (%s stage), refused by control `%s`", rec.AgentName, rec.StepType, rec.StepName, rec.Stage, rec.ControlName)
	if rec.Message != "" {
		text += ": " + rec.Message
	}
	for _, c := range rec.Controls[min(1, len(rec.Controls)):] {
		text += fmt.Sprintf("; and by control `%s`", c.ControlName)
		if c.Message != "" {
			text += ": " + c.Message
		}
	}
	text += fmt.Sprintf("\n```%s```\nApprove or reject before %s: POST %s {\"decision\": \"approve\"|\"reject\"} (or the dashboard's Approvals).",
		step, rec.ExpiresAt.Format(time.RFC3339), approvalPath(rec.ID))
	body, err := json.Marshal(webhookBody{Text: text, Approval: webhookApproval{ID: rec.ID, AgentName: rec.AgentName, ControlID: rec.ControlID,
		ControlName: rec.ControlName, StepType: rec.StepType, StepName: rec.StepName, Stage: rec.Stage, PayloadHash: rec.PayloadHash,
		Message: rec.Message, Approvers: rec.Approvers, Step: rec.Step, Controls: rec.Controls, ExpiresAt: rec.ExpiresAt, URL: approvalPath(rec.ID)}})
	if err != nil {
		h.log.Warn("approval webhook: the notice cannot be encoded", zap.String("approval_id", rec.ID), zap.Error(err))
		return
	}
	select {
	case h.queue <- body:
	default:
		h.log.Warn("approval webhook: queue full, notice dropped", zap.String("approval_id", rec.ID))
	}
}

// send posts body, retrying a bounded number of times.
func (h *webhook) send(ctx context.Context, body []byte) {
	wait := h.backoff
	for attempt := 1; ; attempt++ {
		status, err := h.post(ctx, body)
		if err == nil && status < 300 {
			return
		}
		retry := err != nil || status == http.StatusTooManyRequests || status >= 500
		if !retry || attempt == webhookAttempts {
			h.log.Warn("approval webhook: notice not delivered", zap.Int("attempts", attempt), zap.Int("status", status), zap.Error(err))
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait *= 2
	}
}

func (h *webhook) post(ctx context.Context, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
