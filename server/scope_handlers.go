package server

import (
	"context"
	"strconv"

	"github.com/guardrail-control/guard/server/capture"
)

// The scope checks of the routes that name agents or controls in their body rather than their path
// (scope.go covers the path parameters).

// checkStepAgents refuses a batch of captured steps naming an agent outside the key's scope; none of the
// batch is kept.
func checkStepAgents(ctx context.Context, items []capture.Item) error {
	for i := range items {
		if err := checkAgent(ctx, items[i].Agent, "steps."+strconv.Itoa(i)+".agent_name"); err != nil {
			return err
		}
	}
	return nil
}

// jobInScope reports whether the request's key may read a replay job: a scoped key reads the jobs of its
// agents, never a replay of every agent.
func jobInScope(ctx context.Context, job *replayJob) bool {
	if !keyScoped(ctx) {
		return true
	}
	return job.agent != "" && KeyAllowsAgent(ctx, job.agent)
}

// checkReplayScope: a scoped key replays one of its agents (a replay of every agent would read the
// steps of others: 403), and its draft may name only the controls it sees (404 otherwise).
func (s *Server) checkReplayScope(ctx context.Context, agent string, drafts []draftControl) error {
	if !keyScoped(ctx) {
		return nil
	}
	if agent == "" {
		return errOutOfScope("a key limited to agents replays one of them: name it in agent_name")
	}
	if err := checkAgent(ctx, agent, "agent_name"); err != nil {
		return err
	}
	for _, d := range drafts {
		if d.ID != nil && *d.ID > 0 {
			if err := s.checkControl(ctx, *d.ID, false); err != nil {
				return err
			}
		}
	}
	return nil
}
