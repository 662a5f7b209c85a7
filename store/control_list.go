package store

import (
	"context"
	"strings"

	guard "github.com/guardrail-control/guard"
)

// ListControls lists live controls, newest first, with the filters of GET /controls: a case-insensitive
// substring of the name, the enabled flag, a tag, and a step type or stage that the control's scope
// contains or does not restrict. A control without data matches no tag, step type or stage filter.
func (s *Store) ListControls(ctx context.Context, f guard.ControlFilter, page guard.PageRequest) ([]guard.ControlSummary, guard.PageInfo, error) {
	after, err := s.decodeCursor(ctx, "controls", page.Cursor)
	if err != nil {
		return nil, guard.PageInfo{}, err
	}
	limit := clampLimit(page.Limit)
	where, args := []string{`c.deleted_at IS NULL`}, []any{}
	if f.Name != "" {
		where, args = append(where, s.contains(`LOWER(c.name)`)), append(args, clean(strings.ToLower(f.Name)))
	}
	if f.Enabled != nil {
		where, args = append(where, `c.enabled = ?`), append(args, *f.Enabled)
	}
	if f.Tag != "" {
		where, args = append(where, s.contains(`c.tags_key`)), append(args, listKey([]string{clean(f.Tag)}))
	}
	if f.StepType != "" {
		where = append(where, `(c.step_types_key IS NULL OR `+s.contains(`c.step_types_key`)+`)`)
		args = append(args, listKey([]string{clean(f.StepType)}))
	}
	if f.Stage != "" {
		where = append(where, `(c.stages_key IS NULL OR `+s.contains(`c.stages_key`)+`)`)
		args = append(args, listKey([]string{clean(string(f.Stage))}))
	}
	if sc, scArgs := controlScopeCond(f.Scope); sc != "" {
		where, args = append(where, sc), append(args, scArgs...)
	}
	cond := strings.Join(where, ` AND `)
	var total int
	if err := s.r.GetContext(ctx, &total, s.q(`SELECT COUNT(*) FROM controls c WHERE `+cond), args...); err != nil {
		return nil, guard.PageInfo{}, mapErr(err)
	}
	if after > 0 {
		cond += ` AND c.id < ?`
		args = append(args, after)
	}
	args = append(args, limit+1)
	var rows []struct {
		controlRow
		AgentCount int `db:"agent_count"`
	}
	err = s.r.SelectContext(ctx, &rows, s.q(`SELECT c.id, c.name, c.enabled, c.data, c.version, c.created_at, c.updated_at,
		c.deleted_at, (SELECT COUNT(*) FROM agent_controls l WHERE l.control_id = c.id) AS agent_count
		FROM controls c WHERE `+cond+` ORDER BY c.id DESC LIMIT ?`), args...)
	if err != nil {
		return nil, guard.PageInfo{}, mapErr(err)
	}
	pr, err := s.pageInfo(ctx, "controls", limit, len(rows), total, func(i int) int64 { return rows[i].ID })
	if err != nil {
		return nil, guard.PageInfo{}, err
	}
	out := make([]guard.ControlSummary, 0, pr.Rows)
	for _, r := range rows[:pr.Rows] {
		sum := guard.ControlSummary{ID: r.ID, Name: r.Name, Enabled: r.Enabled, AgentCount: r.AgentCount,
			UpdatedAt: toTime(r.UpdatedAt), Tags: []string{}}
		d, err := decodeData(r.Data, r.Enabled)
		if err != nil {
			return nil, guard.PageInfo{}, err
		}
		if d != nil {
			sum.Description, sum.Execution, sum.Decision = d.Description, d.Execution, d.Action.Decision
			if d.Mode == guard.ModeShadow {
				sum.Mode = d.Mode
			}
			// nil scope lists stay nil (JSON null): the control does not restrict them.
			sum.StepTypes, sum.Stages = d.Scope.StepTypes, d.Scope.Stages
			if d.Tags != nil {
				sum.Tags = d.Tags
			}
		}
		out = append(out, sum)
	}
	return out, pr.info(), nil
}
