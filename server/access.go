package server

import (
	"net/http"

	"github.com/guardrail-control/guard/server/problem"
)

// accessView is GET /api/v1/access: what the request's key may do, for a client (the dashboard) that
// enables only what the key may use. It reveals nothing the key's holder cannot find out by trying.
type accessView struct {
	// Authenticated is false when the server runs without authentication (everything is allowed).
	Authenticated bool `json:"authenticated"`
	// KeyName is the key's name (server.KeyName), absent without authentication.
	KeyName string `json:"key_name,omitempty"`
	// Admin: the key may change controls, links and agents (every admin route).
	Admin bool `json:"admin"`
	// Approve: the key may decide approval requests (an admin key, or a key with the approve permission),
	// of Agents only when Agents is set.
	Approve bool `json:"approve"`
	// Agents are the agent names and patterns a scoped key reaches; absent for a key of every agent.
	Agents []string `json:"agents,omitempty"`
	// ReadOnly: the key may only read (role read, or read_only in the key file): no evaluation either.
	ReadOnly bool `json:"read_only,omitempty"`
}

// access is GET /api/v1/access (any valid key).
func (s *Server) access(w http.ResponseWriter, r *http.Request) {
	v := accessView{Admin: true, Approve: true}
	if e := identityOf(r.Context()); e != nil {
		v = accessView{Authenticated: true, KeyName: e.name, Admin: e.admin, Approve: e.admin || e.approve, Agents: e.scope.names(),
			ReadOnly: e.readOnly}
	}
	problem.Respond(w, r, s.log, http.StatusOK, v)
}
