package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jmoiron/sqlx"

	guard "github.com/guardrail-control/guard"
)

// checkInit validates an InitAgent input and returns the normalised agent name.
func checkInit(in *guard.AgentInit) (string, error) {
	var probs []guard.Problem
	name, err := guard.NormalizeAgentName(in.Agent.Name)
	if err != nil {
		probs = append(probs, guard.Problem{Field: "agent.agent_name", Code: guard.CodeInvalid, Message: "agent name " + err.Error()})
	}
	switch in.ConflictMode {
	case "", guard.ConflictStrict, guard.ConflictOverwrite:
	default:
		probs = append(probs, guard.Problem{Field: "conflict_mode", Code: guard.CodeInvalid, Message: "must be strict or overwrite"})
	}
	if enc, p := guard.CheckFreeJSON("agent.agent_metadata", in.Agent.Metadata); p != nil {
		probs = append(probs, *p)
	} else if enc != nil && !storableJSON(string(enc)) {
		probs = append(probs, unstorable("agent.agent_metadata"))
	}
	if len(in.Steps) > guard.MaxAgentSteps {
		// Checked before the steps themselves: a huge list is refused without walking it.
		probs = append(probs, guard.Problem{Field: "steps", Code: guard.CodeTooLong, Message: fmt.Sprintf("must have at most %d steps", guard.MaxAgentSteps)})
		return "", &guard.ValidationError{Problems: probs}
	}
	if !storable(in.Agent.Description) {
		probs = append(probs, unstorable("agent.agent_description"))
	}
	if !storable(in.Agent.Version) {
		probs = append(probs, unstorable("agent.agent_version"))
	}
	seen := make(map[guard.StepRef]bool, len(in.Steps))
	for i, st := range in.Steps {
		field := "steps." + strconv.Itoa(i)
		if st.Type == "" || len(st.Type) > guard.MaxNameLength {
			probs = append(probs, guard.Problem{Field: field + ".type", Code: guard.CodeInvalid, Message: "must be 1 to 255 characters long"})
		}
		if st.Name == "" || len(st.Name) > guard.MaxNameLength {
			probs = append(probs, guard.Problem{Field: field + ".name", Code: guard.CodeInvalid, Message: "must be 1 to 255 characters long"})
		}
		if !storable(st.Type) || !storable(st.Name) || !storable(st.Description) {
			probs = append(probs, unstorable(field))
		}
		for _, doc := range []struct {
			name string
			m    map[string]any
		}{{"input_schema", st.InputSchema}, {"output_schema", st.OutputSchema}, {"metadata", st.Metadata}} {
			enc, p := guard.CheckFreeJSON(field+"."+doc.name, doc.m)
			switch {
			case p != nil:
				probs = append(probs, *p)
			case enc != nil && !storableJSON(string(enc)):
				probs = append(probs, guard.Problem{Field: field + "." + doc.name, Code: guard.CodeInvalid, Message: "must be a JSON object without NUL characters"})
			}
		}
		probs = append(probs, guard.CheckLabels(st.Labels, field+".labels")...)
		ref := guard.StepRef{Type: st.Type, Name: st.Name}
		if seen[ref] {
			probs = append(probs, guard.Problem{Field: field, Code: guard.CodeConflict, Message: "repeats the (type, name) of an earlier step"})
		}
		seen[ref] = true
	}
	if len(probs) > 0 {
		return "", &guard.ValidationError{Problems: probs}
	}
	return name, nil
}

// InitAgent registers an agent with its steps. A new agent is created. For an existing one, overwrite
// replaces description, version, metadata and the whole step list; strict (the default) keeps the agent
// and its stored steps, adds the new steps, and fails with guard.ErrSchemaIncompatible when a step with a
// stored (type, name) arrives with a different input or output schema (compared as JSON values).
func (s *Store) InitAgent(ctx context.Context, in guard.AgentInit) (bool, guard.Agent, error) {
	name, err := checkInit(&in)
	if err != nil {
		return false, guard.Agent{}, err
	}
	md, err := jsonArg(in.Agent.Metadata)
	if in.Agent.Metadata == nil {
		md = "{}"
	}
	if err != nil {
		return false, guard.Agent{}, err
	}
	var created bool
	var row agentRow
	// Two first registrations of one agent can race on PostgreSQL: the loser's INSERT violates the unique
	// name, and its second attempt finds the agent and proceeds as for an existing one.
	for attempt := 0; ; attempt++ {
		err = s.initAgentTx(ctx, &in, name, md, &created, &row)
		if attempt == 0 && isUniqueViolation(err) {
			continue
		}
		break
	}
	if err != nil {
		return false, guard.Agent{}, err
	}
	a, err := row.agent()
	return created, a, err
}

func (s *Store) initAgentTx(ctx context.Context, in *guard.AgentInit, name, md string, created *bool, out *agentRow) error {
	*created = false
	var row agentRow
	err := s.writeTx(ctx, func(tx *sqlx.Tx) error {
		at := now()
		var err error
		var labelsBefore map[guard.StepRef][]string
		row, err = s.loadAgent(ctx, tx, name, true)
		switch {
		case errors.Is(err, guard.ErrAgentNotFound):
			*created = true
			var epoch int64
			if err := tx.GetContext(ctx, &epoch, `SELECT epoch FROM policy_epoch WHERE id = 1`); err != nil {
				return err
			}
			if err := tx.GetContext(ctx, &row.ID, s.q(`INSERT INTO agents (name, description, version, metadata, revision, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`), name, in.Agent.Description, in.Agent.Version, md, epoch, at, at); err != nil {
				return err
			}
			if err := s.insertSteps(ctx, tx, row.ID, 0, in.Steps); err != nil {
				return err
			}
		case err != nil:
			return err
		default:
			if labelsBefore, err = s.loadStepLabels(ctx, tx, row.ID); err != nil {
				return err
			}
		}
		switch {
		case *created:
		case in.ConflictMode == guard.ConflictOverwrite:
			if _, err := tx.ExecContext(ctx, s.q(`UPDATE agents SET description = ?, version = ?, metadata = ?, updated_at = ? WHERE id = ?`),
				in.Agent.Description, in.Agent.Version, md, at, row.ID); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM agent_steps WHERE agent_id = ?`), row.ID); err != nil {
				return err
			}
			if err := s.insertSteps(ctx, tx, row.ID, 0, in.Steps); err != nil {
				return err
			}
		default:
			if err := s.mergeSteps(ctx, tx, row.ID, in.Steps, at); err != nil {
				return err
			}
		}
		if !*created {
			labelsAfter, err := s.loadStepLabels(ctx, tx, row.ID)
			if err != nil {
				return err
			}
			if !sameStepLabels(labelsBefore, labelsAfter) {
				if err := s.bumpRevision(ctx, tx, row.ID); err != nil {
					return err
				}
			}
		}
		row, err = s.loadAgent(ctx, tx, name, false)
		return err
	})
	*out = row
	return err
}

// mergeSteps is InitAgent's strict mode for an existing agent.
func (s *Store) mergeSteps(ctx context.Context, tx *sqlx.Tx, agentID int64, steps []guard.StepSchema, at int64) error {
	stored, err := s.loadSteps(ctx, tx, agentID)
	if err != nil {
		return err
	}
	byRef := make(map[guard.StepRef]*stepRow, len(stored))
	next := 0
	for i := range stored {
		byRef[guard.StepRef{Type: stored[i].Type, Name: stored[i].Name}] = &stored[i]
		next = max(next, stored[i].Position+1)
	}
	var added []guard.StepSchema
	for i, st := range steps {
		old, ok := byRef[guard.StepRef{Type: st.Type, Name: st.Name}]
		if !ok {
			added = append(added, st)
			continue
		}
		for _, c := range []struct {
			what   string
			stored []byte
			given  map[string]any
		}{{"input_schema", old.InputSchema, st.InputSchema}, {"output_schema", old.OutputSchema, st.OutputSchema}} {
			same, err := sameJSON(c.stored, c.given)
			if err != nil {
				return err
			}
			if !same {
				return fmt.Errorf("steps.%d: %s differs from the registered step's: %w", i, c.what, guard.ErrSchemaIncompatible)
			}
		}
	}
	if len(added) == 0 {
		return nil
	}
	if len(stored)+len(added) > guard.MaxAgentSteps {
		return &guard.ValidationError{Problems: []guard.Problem{{Field: "steps", Code: guard.CodeTooLong,
			Message: fmt.Sprintf("would give the agent more than %d steps", guard.MaxAgentSteps)}}}
	}
	if err := s.insertSteps(ctx, tx, agentID, next, added); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, s.q(`UPDATE agents SET updated_at = ? WHERE id = ?`), at, agentID)
	return err
}
