package client

import (
	"context"
	"errors"
	"net/http"
	"time"

	"go.uber.org/zap"

	guard "github.com/guardrail-control/guard"
)

// Refresh fetches the agent's controls now (with If-None-Match: an unchanged list costs a 304) and swaps
// in the new snapshot. If the agent could not register at Init it registers first. On failure the
// current snapshot stays (fail-open) and the error is returned; the background refresh calls the same
// method.
func (a *Agent) Refresh(ctx context.Context) error {
	if a.ctx != nil && a.ctx.Err() != nil {
		return errClosed
	}
	a.refreshMu.Lock()
	defer a.refreshMu.Unlock()
	err := a.refreshLocked(ctx)
	switch {
	case err != nil && !a.failing:
		a.failing = true
		a.logRefresh.Warn("refreshing controls failed; keeping the last good snapshot until the server answers",
			zap.String("agent", a.name), zap.String("source", a.Source()), zap.Error(err))
	case err == nil && a.failing:
		a.failing = false
		a.logRefresh.Info("controls refreshed from the server again", zap.String("agent", a.name),
			zap.Int("controls", len(a.Controls())))
	}
	return err
}

// refreshLocked registers the agent if needed and fetches its controls. Caller holds refreshMu.
func (a *Agent) refreshLocked(ctx context.Context) error {
	if !a.registered.Load() {
		req := InitAgentRequest{
			Agent: AgentInfo{
				Name:        a.name,
				Description: a.s.Description,
				Version:     a.s.Version,
				Metadata:    a.s.Metadata,
			},
			Steps:        a.s.Steps,
			ConflictMode: a.s.ConflictMode,
		}
		_, err := a.api.InitAgent(ctx, req)
		var ae *APIError
		if errors.As(err, &ae) && ae.Status == http.StatusForbidden && req.ConflictMode == guard.ConflictOverwrite {
			// A runtime key may not replace a registration an admin made (docs/api.md, initAgent): register
			// in strict mode instead, which adds this agent's new steps and keeps what is stored.
			a.logRefresh.Info("this key may not overwrite the agent's registration; registering in strict mode (new steps are added, the stored description, metadata and steps are kept)",
				zap.String("agent", a.name))
			req.ConflictMode = guard.ConflictStrict
			_, err = a.api.InitAgent(ctx, req)
		}
		if err != nil {
			return err
		}
		a.registered.Store(true)
		a.etag = ""
	}
	acs, etag, notModified, err := a.api.AgentControls(ctx, a.name, a.etag)
	if err != nil {
		var ae *APIError
		if errors.As(err, &ae) && ae.Code == "AGENT_NOT_FOUND" {
			a.registered.Store(false) // deleted on the server: register again next time
		}
		return err
	}
	if notModified && a.Source() == SourceServer {
		a.logRefresh.Debug("controls unchanged", zap.String("agent", a.name))
		return nil
	}
	if notModified {
		// A 304 for a snapshot we do not hold from the server cannot happen with a fresh tag; ask again.
		a.etag = ""
		if acs, etag, _, err = a.api.AgentControls(ctx, a.name, ""); err != nil {
			return err
		}
	}
	a.pol.Store(a.compile(fromAgentControls(acs), SourceServer))
	a.etag = etag
	a.logRefresh.Debug("controls updated", zap.String("agent", a.name), zap.Int("controls", len(acs)))
	return nil
}

// refreshLoop refreshes every interval until Close.
func (a *Agent) refreshLoop(interval time.Duration) {
	defer a.wg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-a.ctx.Done():
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(a.ctx, a.s.Timeout)
			_ = a.Refresh(ctx)
			cancel()
		}
	}
}
