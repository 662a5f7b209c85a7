package observability

import (
	"context"
	"net/http"
	"strconv"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
)

// scope is the agent scope of the request's API key (API.Scope), the zero scope when the API has none.
func (a *API) scope(ctx context.Context) (guard.AgentScope, error) {
	if a.Scope == nil {
		return guard.AgentScope{}, nil
	}
	return a.Scope(ctx)
}

// outOfScope is the 404 a key scoped to some agents gets for an agent it does not reach: the answer a
// missing agent would get, so that the key learns nothing of other agents.
func outOfScope(field string) error {
	pe := problem.New(http.StatusNotFound, problem.CodeAgentNotFound, "agent not found")
	pe.Problems = []guard.Problem{{Field: field, Code: "not_found", Message: "no agent has this name"}}
	return pe
}

// checkEventAgents refuses a batch naming an agent outside the key's scope (none of it is recorded).
func (a *API) checkEventAgents(ctx context.Context, events []guard.Event) error {
	if a.AllowsAgent == nil {
		return nil
	}
	for i := range events {
		if !a.AllowsAgent(ctx, events[i].AgentName) {
			return outOfScope("events." + strconv.Itoa(i) + ".agent_name")
		}
	}
	return nil
}

// scoped returns the scope of a query naming agent (""): 404 when the key does not reach it.
func (a *API) scoped(ctx context.Context, agent, field string) (guard.AgentScope, error) {
	if agent != "" && a.AllowsAgent != nil && !a.AllowsAgent(ctx, agent) {
		return guard.AgentScope{}, outOfScope(field)
	}
	return a.scope(ctx)
}
