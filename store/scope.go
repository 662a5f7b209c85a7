package store

import (
	"context"
	"strings"

	guard "github.com/guardrail-control/guard"
)

// scopeCond is the SQL condition keeping the rows whose column col names an agent of sc, with its
// arguments; "" when sc does not restrict. A limited scope without names keeps nothing.
func scopeCond(col string, sc guard.AgentScope) (string, []any) {
	if !sc.Limited {
		return "", nil
	}
	if len(sc.Names) == 0 {
		return `1 = 0`, nil
	}
	args := make([]any, len(sc.Names))
	for i, n := range sc.Names {
		args[i] = clean(n)
	}
	return col + ` IN (` + strings.TrimSuffix(strings.Repeat(`?, `, len(sc.Names)), `, `) + `)`, args
}

// controlScopeCond keeps the controls (alias c) linked to an agent of sc and those linked to no agent.
func controlScopeCond(sc guard.AgentScope) (string, []any) {
	in, args := scopeCond(`sa.name`, sc)
	if in == "" {
		return "", nil
	}
	return `(NOT EXISTS (SELECT 1 FROM agent_controls sl WHERE sl.control_id = c.id) OR EXISTS (SELECT 1 FROM agent_controls sl
		JOIN agents sa ON sa.id = sl.agent_id WHERE sl.control_id = c.id AND ` + in + `))`, args
}

// ControlAgents returns the names of the agents a live control is linked to, sorted; ErrControlNotFound
// when there is no such control. The server reads it to decide what a key scoped to some agents may do
// with the control.
func (s *Store) ControlAgents(ctx context.Context, id int64) ([]string, error) {
	var n int
	if err := s.r.GetContext(ctx, &n, s.q(`SELECT COUNT(*) FROM controls WHERE id = ? AND deleted_at IS NULL`), id); err != nil {
		return nil, mapErr(err)
	}
	if n == 0 {
		return nil, guard.ErrControlNotFound
	}
	names := []string{}
	if err := s.r.SelectContext(ctx, &names, s.q(`SELECT a.name FROM agent_controls l JOIN agents a ON a.id = l.agent_id
		WHERE l.control_id = ? ORDER BY a.name`), id); err != nil {
		return nil, mapErr(err)
	}
	return names, nil
}

// AgentNames returns the names of every agent, sorted: the server matches a scoped key's patterns
// against them.
func (s *Store) AgentNames(ctx context.Context) ([]string, error) {
	names := []string{}
	if err := s.r.SelectContext(ctx, &names, s.q(`SELECT name FROM agents ORDER BY name`)); err != nil {
		return nil, mapErr(err)
	}
	return names, nil
}
