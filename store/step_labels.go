package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"

	guard "github.com/guardrail-control/guard"
)

// Step labels (initAgent "labels") are a nullable JSON list in agent_steps.labels. A change of an agent's
// step labels changes what its session controls decide, so InitAgent moves the agent's revision (and the
// policy epoch) when they change: every replica's engine cache then picks them up as it does a change of
// the agent's controls.

// labelsArg encodes labels for the column: none is NULL.
func labelsArg(labels []string) (any, error) {
	if len(labels) == 0 {
		return nil, nil
	}
	return jsonArg(labels)
}

// scanLabels decodes the column (nil for NULL).
func scanLabels(b []byte) ([]string, error) {
	if b == nil {
		return nil, nil
	}
	var out []string
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("store: decode stored step labels: %w", err)
	}
	return out, nil
}

// stepLabelRow is a step's labels column.
type stepLabelRow struct {
	Type   string `db:"type"`
	Name   string `db:"name"`
	Labels []byte `db:"labels"`
}

// loadStepLabels reads the labels of an agent's steps, by (type, name); steps without labels are absent.
func (s *Store) loadStepLabels(ctx context.Context, q sqlx.QueryerContext, agentID int64) (map[guard.StepRef][]string, error) {
	var rows []stepLabelRow
	if err := sqlx.SelectContext(ctx, q, &rows, s.q(`SELECT type, name, labels FROM agent_steps WHERE agent_id = ? AND labels IS NOT NULL`), agentID); err != nil {
		return nil, err
	}
	out := make(map[guard.StepRef][]string, len(rows))
	for _, r := range rows {
		l, err := scanLabels(r.Labels)
		if err != nil {
			return nil, err
		}
		if len(l) > 0 {
			out[guard.StepRef{Type: r.Type, Name: r.Name}] = l
		}
	}
	return out, nil
}

// sameStepLabels reports whether two label maps are equal (the order of a step's labels counts: it is
// the order in which the step adds them).
func sameStepLabels(a, b map[guard.StepRef][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !slices.Equal(v, w) {
			return false
		}
	}
	return true
}

// bumpRevision moves the agent's revision to a new policy epoch inside tx.
func (s *Store) bumpRevision(ctx context.Context, tx *sqlx.Tx, agentID int64) error {
	var epoch int64
	if err := tx.GetContext(ctx, &epoch, `UPDATE policy_epoch SET epoch = epoch + 1 WHERE id = 1 RETURNING epoch`); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, s.q(`UPDATE agents SET revision = ? WHERE id = ?`), epoch, agentID)
	return err
}

// AgentStepLabels returns the labels the agent's registered steps declare, by step name (steps of one
// name and different types share theirs); nil when none does. The server's engine cache reads it when it
// compiles an agent whose controls use session state. ErrAgentNotFound if there is no such agent.
func (s *Store) AgentStepLabels(ctx context.Context, agentName string) (map[string][]string, error) {
	key, err := agentKey(agentName)
	if err != nil {
		return nil, err
	}
	row, err := s.loadAgent(ctx, s.r, key, false)
	if err != nil {
		return nil, mapErr(err)
	}
	byRef, err := s.loadStepLabels(ctx, s.r, row.ID)
	if err != nil {
		return nil, mapErr(err)
	}
	steps := make([]guard.StepSchema, 0, len(byRef))
	for ref, l := range byRef {
		steps = append(steps, guard.StepSchema{Type: ref.Type, Name: ref.Name, Labels: l})
	}
	slices.SortFunc(steps, func(a, b guard.StepSchema) int {
		if a.Name != b.Name {
			return strings.Compare(a.Name, b.Name)
		}
		return strings.Compare(a.Type, b.Type)
	})
	return guard.LabelsOfSteps(steps), nil
}
