package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
)

// Keys scoped to agents (docs/operations.md "Named and scoped keys", docs/api.md "Authentication"). A
// scoped key reaches its agents only. What it may not reach is answered as if it did not exist: 404
// AGENT_NOT_FOUND or CONTROL_NOT_FOUND, so that a key cannot learn which agents and controls other teams
// have. 403 AUTH_OUT_OF_SCOPE is kept for what the key can see but may not change (a control also linked
// to agents outside its scope) and for what only a global key may do (a replay of every agent, the
// profiler).

// CodeAuthOutOfScope is the code of 403 answers to a scoped key reaching outside its agents.
const CodeAuthOutOfScope = "AUTH_OUT_OF_SCOPE"

// scopeStore is what the server needs from the store to enforce scopes; the store package implements it.
type scopeStore interface {
	// ControlAgents returns the agents a live control is linked to (guard.ErrControlNotFound if none such).
	ControlAgents(ctx context.Context, id int64) ([]string, error)
	// AgentNames returns every agent's name.
	AgentNames(ctx context.Context) ([]string, error)
}

func errOutOfScope(detail string) error {
	return problem.New(http.StatusForbidden, CodeAuthOutOfScope, detail)
}

// agentNotFound is the answer to a scoped key naming an agent outside its scope: the one a missing agent gets.
func agentNotFound(field string) error {
	pe := problem.New(http.StatusNotFound, problem.CodeAgentNotFound, "agent not found")
	if field != "" {
		pe.Problems = []guard.Problem{{Field: field, Code: "not_found", Message: "no agent has this name"}}
	}
	return pe
}

// checkAgent returns the 404 a scoped key gets for an agent outside its scope, nil otherwise.
func checkAgent(ctx context.Context, agent, field string) error {
	if KeyAllowsAgent(ctx, agent) {
		return nil
	}
	return agentNotFound(field)
}

// agentScope is the store filter of the request's key: the zero scope for a global key, else the names
// of the existing agents its names and patterns reach.
func (s *Server) agentScope(ctx context.Context) (guard.AgentScope, error) {
	e := identityOf(ctx)
	if e == nil || e.scope == nil {
		return guard.AgentScope{}, nil
	}
	out := guard.AgentScope{Limited: true, Names: []string{}}
	if len(e.scope.patterns) == 0 {
		for n := range e.scope.exact {
			out.Names = append(out.Names, n)
		}
		return out, nil
	}
	ss, ok := s.store.(scopeStore)
	if !ok {
		return out, errors.New("server: the store cannot list agent names for a scoped key")
	}
	names, err := ss.AgentNames(ctx)
	if err != nil {
		return out, err
	}
	for _, n := range names {
		if e.scope.allows(n) {
			out.Names = append(out.Names, n)
		}
	}
	return out, nil
}

// checkControl decides what the request's key may do with control id: nil for a global key; for a
// scoped key, 404 CONTROL_NOT_FOUND unless the control is linked to one of its agents or to none (an
// unlinked control belongs to no agent), and, when write, 403 unless every agent it is linked to is in
// the scope (a change would otherwise reach agents of others).
func (s *Server) checkControl(ctx context.Context, id int64, write bool) error {
	e := identityOf(ctx)
	if e == nil || e.scope == nil {
		return nil
	}
	ss, ok := s.store.(scopeStore)
	if !ok {
		return errors.New("server: the store cannot list a control's agents for a scoped key")
	}
	agents, err := ss.ControlAgents(ctx, id)
	if err != nil {
		return err
	}
	in := 0
	for _, a := range agents {
		if e.scope.allows(a) {
			in++
		}
	}
	switch {
	case len(agents) > 0 && in == 0:
		return guard.ErrControlNotFound
	case write && in < len(agents):
		return errOutOfScope("this control is also linked to agents outside this key's scope: only a key reaching all of them may change it")
	}
	return nil
}

// scopeRoute wraps the handler of a route whose path names an agent or a control with the scope checks
// of the request's key, so that every such route, present and future, is covered: {agent_name} must be
// in the scope; {control_id} must be visible, and writable when the method changes something (except on
// the link routes /agents/{agent_name}/controls/{control_id}, which change only the named agent). Routes
// that name agents or controls in their body or query check them in their handler (scope_handlers.go).
func (s *Server) scopeRoute(rt route, h http.Handler) http.Handler {
	if !s.auth.enabled {
		return h // no key at all: nothing to check, nothing to pay (a key limited to agents may be added at any time)
	}
	hasAgent := strings.Contains(rt.path, "{agent_name}")
	// The statistics of a control are filtered by the key's agents instead (observability/scope.go): they
	// stay readable after the control is deleted, and what they show of other agents is nothing.
	hasControl := strings.Contains(rt.path, "{control_id}") && !strings.HasPrefix(rt.path, apiPrefix+"/observability/")
	globalOnly := strings.HasPrefix(rt.path, "/debug/")
	if !hasAgent && !hasControl && !globalOnly {
		return h
	}
	write := rt.method != http.MethodGet && rt.method != http.MethodHead && !hasAgent
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !keyScoped(r.Context()) {
			h.ServeHTTP(w, r)
			return
		}
		if globalOnly {
			s.writeErr(w, r, errOutOfScope("this route needs a key that is not limited to agents"))
			return
		}
		if hasAgent {
			if err := checkAgent(r.Context(), r.PathValue("agent_name"), ""); err != nil {
				s.writeErr(w, r, err)
				return
			}
		}
		if hasControl {
			id, err := strconv.ParseInt(r.PathValue("control_id"), 10, 64)
			if err == nil && id > 0 { // a malformed id is the handler's 422
				if err := s.checkControl(r.Context(), id, write); err != nil {
					s.writeErr(w, r, err)
					return
				}
			}
		}
		h.ServeHTTP(w, r)
	})
}
