package store

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/jmoiron/sqlx"

	guard "github.com/guardrail-control/guard"
)

// InsertAudit records one control-plane change and returns its id. Text that cannot be stored is
// replaced like everywhere else: the trail is a record.
func (s *Store) InsertAudit(ctx context.Context, e guard.AuditEntry) (int64, error) {
	ts := now()
	if !e.Time.IsZero() {
		ts = e.Time.UnixMicro()
	}
	changes := e.Changes
	if changes == nil {
		changes = []string{}
	}
	for i := range changes {
		changes[i] = clean(changes[i])
	}
	cb, err := json.Marshal(changes)
	if err != nil {
		return 0, err
	}
	var id int64
	err = s.writeTx(ctx, func(tx *sqlx.Tx) error {
		return tx.GetContext(ctx, &id, s.q(`INSERT INTO audit_log (ts, key_name, method, route, path, action, agents,
			control_id, version, request_id, changes, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
			ts, clean(e.KeyName), clean(e.Method), clean(e.Route), clean(e.Path), clean(e.Action), agentsKey(e.Agents),
			e.ControlID, e.Version, clean(e.RequestID), string(cb), clean(string(e.Detail)))
	})
	return id, mapErr(err)
}

type auditRow struct {
	ID        int64  `db:"id"`
	TS        int64  `db:"ts"`
	KeyName   string `db:"key_name"`
	Method    string `db:"method"`
	Route     string `db:"route"`
	Path      string `db:"path"`
	Action    string `db:"action"`
	Agents    string `db:"agents"`
	ControlID int64  `db:"control_id"`
	Version   int    `db:"version"`
	RequestID string `db:"request_id"`
	Changes   string `db:"changes"`
	Detail    string `db:"detail"`
}

// ListAudit lists audit entries newest first (by id), filtered by q, a page at a time with the store's
// signed cursors. With a limited scope it keeps the entries reaching one of its agents, and those reaching
// none about a live control the scope sees (an unlinked one) or about no control.
func (s *Store) ListAudit(ctx context.Context, q guard.AuditQuery, page guard.PageRequest) ([]guard.AuditEntry, guard.PageInfo, error) {
	after, err := s.decodeCursor(ctx, "audit", page.Cursor)
	if err != nil {
		return nil, guard.PageInfo{}, err
	}
	limit := clampLimit(page.Limit)
	where, args := []string{`1 = 1`}, []any{}
	add := func(cond string, a ...any) { where, args = append(where, cond), append(args, a...) }
	if q.KeyName != "" {
		add(`l.key_name = ?`, clean(q.KeyName))
	}
	if q.AgentName != "" {
		add(s.contains(`l.agents`), listKey([]string{clean(q.AgentName)}))
	}
	if q.ControlID != 0 {
		add(`l.control_id = ?`, q.ControlID)
	}
	if q.Action != "" {
		add(`l.action = ?`, clean(q.Action))
	}
	if !q.Since.IsZero() {
		add(`l.ts >= ?`, q.Since.UnixMicro())
	}
	if !q.Until.IsZero() {
		add(`l.ts < ?`, q.Until.UnixMicro())
	}
	if q.Scope.Limited {
		// An entry that reached one of the agents; or one that reached none (a control's change while it
		// was unlinked), when it is about no control or about a live control the scope sees today (linked
		// to one of its agents or to none), so that the early history of another team's control stays theirs.
		ors := []string{}
		for _, n := range q.Scope.Names {
			ors = append(ors, s.contains(`l.agents`))
			args = append(args, listKey([]string{clean(n)}))
		}
		ctl, ctlArgs := controlScopeCond(q.Scope)
		ors = append(ors, `(l.agents = '' AND (l.control_id = 0 OR EXISTS (SELECT 1 FROM controls c
			WHERE c.id = l.control_id AND c.deleted_at IS NULL AND `+ctl+`)))`)
		args = append(args, ctlArgs...)
		where = append(where, `(`+strings.Join(ors, ` OR `)+`)`)
	}
	cond := strings.Join(where, ` AND `)
	var total int
	if err := s.r.GetContext(ctx, &total, s.q(`SELECT COUNT(*) FROM audit_log l WHERE `+cond), args...); err != nil {
		return nil, guard.PageInfo{}, mapErr(err)
	}
	if after > 0 {
		cond += ` AND l.id < ?`
		args = append(args, after)
	}
	args = append(args, limit+1)
	var rows []auditRow
	if err := s.r.SelectContext(ctx, &rows, s.q(`SELECT l.id, l.ts, l.key_name, l.method, l.route, l.path, l.action,
		l.agents, l.control_id, l.version, l.request_id, l.changes, l.detail
		FROM audit_log l WHERE `+cond+` ORDER BY l.id DESC LIMIT ?`), args...); err != nil {
		return nil, guard.PageInfo{}, mapErr(err)
	}
	pr, err := s.pageInfo(ctx, "audit", limit, len(rows), total, func(i int) int64 { return rows[i].ID })
	if err != nil {
		return nil, guard.PageInfo{}, err
	}
	out := make([]guard.AuditEntry, 0, pr.Rows)
	for _, r := range rows[:pr.Rows] {
		e := guard.AuditEntry{ID: r.ID, Time: toTime(r.TS), KeyName: r.KeyName, Method: r.Method, Route: r.Route, Path: r.Path,
			Action: r.Action, Agents: parseAgentsKey(r.Agents), ControlID: r.ControlID, Version: r.Version, RequestID: r.RequestID, Changes: []string{}}
		if r.Changes != "" {
			_ = json.Unmarshal([]byte(r.Changes), &e.Changes) // written by InsertAudit: a JSON array of strings
		}
		if r.Detail != "" && json.Valid([]byte(r.Detail)) {
			e.Detail = json.RawMessage(r.Detail)
		}
		out = append(out, e)
	}
	return out, pr.info(), nil
}

// agentsKey is the agents column: listKey of the cleaned names, ” for none.
func agentsKey(agents []string) string {
	if len(agents) == 0 {
		return ""
	}
	cl := make([]string, len(agents))
	for i, a := range agents {
		cl[i] = clean(a)
	}
	return listKey(cl)
}

// parseAgentsKey reads an agents column back.
func parseAgentsKey(k string) []string {
	out := []string{}
	k = strings.Trim(k, ",")
	if k == "" {
		return out
	}
	var names []string
	if err := json.Unmarshal([]byte("["+k+"]"), &names); err == nil {
		out = names
	}
	return out
}
