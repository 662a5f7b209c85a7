package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	guard "github.com/guardrail-control/guard"
)

var _ guard.ApprovalStore = (*Store)(nil)

const approvalCols = `id, agent_name, control_id, control_version, control_name, step_type, step_name, stage, payload_hash,
	step, message, approvers, status, ttl_seconds, created_at, expires_at, decided_at, decided_by, decided_via, comment,
	grant_expires_at, used_at, used_execution_id, further_controls, control_set`

// approvalRow is a row of approvals.
type approvalRow struct {
	ID              string        `db:"id"`
	AgentName       string        `db:"agent_name"`
	ControlID       int64         `db:"control_id"`
	ControlVersion  int           `db:"control_version"`
	ControlName     string        `db:"control_name"`
	StepType        string        `db:"step_type"`
	StepName        string        `db:"step_name"`
	Stage           string        `db:"stage"`
	PayloadHash     string        `db:"payload_hash"`
	Step            string        `db:"step"`
	Message         string        `db:"message"`
	Approvers       string        `db:"approvers"`
	Status          string        `db:"status"`
	TTLSeconds      int64         `db:"ttl_seconds"`
	CreatedAt       int64         `db:"created_at"`
	ExpiresAt       int64         `db:"expires_at"`
	DecidedAt       sql.NullInt64 `db:"decided_at"`
	DecidedBy       string        `db:"decided_by"`
	DecidedVia      string        `db:"decided_via"`
	Comment         string        `db:"comment"`
	GrantExpiresAt  sql.NullInt64 `db:"grant_expires_at"`
	UsedAt          sql.NullInt64 `db:"used_at"`
	UsedExecutionID string        `db:"used_execution_id"`
	// FurtherControls are the controls the request covers beside control_id (JSON), ControlSet their
	// "id:version" list ("" for a request of one control): one pending request per step and set.
	FurtherControls string `db:"further_controls"`
	ControlSet      string `db:"control_set"`
}

func optTime(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := toTime(v.Int64)
	return &t
}

func (r *approvalRow) record(nowUS int64) guard.ApprovalRecord {
	rec := guard.ApprovalRecord{ID: r.ID, AgentName: r.AgentName, ControlID: r.ControlID, ControlVersion: r.ControlVersion,
		ControlName: r.ControlName, StepType: r.StepType, StepName: r.StepName, Stage: guard.Stage(r.Stage),
		PayloadHash: r.PayloadHash, Step: json.RawMessage(r.Step), Message: r.Message, Status: r.Status,
		CreatedAt: toTime(r.CreatedAt), ExpiresAt: toTime(r.ExpiresAt), TTL: time.Duration(r.TTLSeconds) * time.Second,
		DecidedAt: optTime(r.DecidedAt), DecidedBy: r.DecidedBy, DecidedVia: r.DecidedVia, Comment: r.Comment,
		GrantExpiresAt: optTime(r.GrantExpiresAt), UsedAt: optTime(r.UsedAt), UsedExecutionID: r.UsedExecutionID}
	if rec.Status == guard.ApprovalPending && r.ExpiresAt <= nowUS {
		rec.Status = guard.ApprovalExpired
	}
	if !json.Valid(rec.Step) {
		rec.Step = json.RawMessage(`null`)
	}
	if err := json.Unmarshal([]byte(r.Approvers), &rec.Approvers); err != nil || rec.Approvers == nil {
		rec.Approvers = []string{}
	}
	rec.Controls = []guard.ApprovalControl{{ControlID: rec.ControlID, ControlVersion: rec.ControlVersion, ControlName: rec.ControlName,
		Message: rec.Message, Approvers: rec.Approvers}}
	var further []guard.ApprovalControl
	if err := json.Unmarshal([]byte(r.FurtherControls), &further); err == nil {
		rec.Controls = append(rec.Controls, further...)
	}
	return rec
}

// furtherControls are the JSON and the set key of the controls rec covers beside its first.
func furtherControls(rec *guard.ApprovalRecord) (string, string) {
	if len(rec.Controls) <= 1 {
		return "[]", ""
	}
	further := make([]guard.ApprovalControl, len(rec.Controls)-1)
	set := make([]byte, 0, 16*len(further))
	for i, c := range rec.Controls[1:] {
		c.ControlName, c.Message = clean(c.ControlName), clean(c.Message)
		further[i] = c
		if i > 0 {
			set = append(set, ',')
		}
		set = strconv.AppendInt(set, c.ControlID, 10)
		set = append(set, ':')
		set = strconv.AppendInt(set, int64(c.ControlVersion), 10)
	}
	b, _ := json.Marshal(further)
	return string(b), string(set)
}

// OpenApproval implements guard.ApprovalStore.
func (s *Store) OpenApproval(ctx context.Context, rec guard.ApprovalRecord) (guard.ApprovalRecord, bool, error) {
	nowUS := now()
	if !rec.CreatedAt.IsZero() {
		nowUS = rec.CreatedAt.UnixMicro()
	}
	ttl := rec.TTL
	if ttl <= 0 {
		ttl = guard.DefaultApprovalTTL * time.Second
	}
	approvers, _ := json.Marshal(rec.Approvers)
	if rec.Approvers == nil {
		approvers = []byte(`[]`)
	}
	row := approvalRow{ID: uuid.NewString(), AgentName: clean(rec.AgentName), ControlID: rec.ControlID, ControlVersion: rec.ControlVersion,
		ControlName: clean(rec.ControlName), StepType: clean(rec.StepType), StepName: clean(rec.StepName), Stage: string(rec.Stage),
		PayloadHash: rec.PayloadHash, Step: cleanJSON(clean(string(rec.Step))), Message: clean(rec.Message), Approvers: string(approvers),
		Status: guard.ApprovalPending, TTLSeconds: int64(ttl / time.Second), CreatedAt: nowUS, ExpiresAt: nowUS + ttl.Microseconds()}
	row.FurtherControls, row.ControlSet = furtherControls(&rec)
	if row.Step == "" {
		row.Step = "null"
	}
	created := false
	err := s.writeTx(ctx, func(tx *sqlx.Tx) error {
		// The step's pending request, unexpired: a retry gets it back.
		binding := `agent_name = ? AND control_id = ? AND control_version = ? AND control_set = ? AND step_type = ? AND step_name = ?
			AND stage = ? AND payload_hash = ? AND status = 'pending'`
		args := []any{row.AgentName, row.ControlID, row.ControlVersion, row.ControlSet, row.StepType, row.StepName, row.Stage, row.PayloadHash}
		var prev approvalRow
		err := tx.GetContext(ctx, &prev, s.q(`SELECT `+approvalCols+` FROM approvals WHERE `+binding+` AND expires_at > ?`), append(args, nowUS)...)
		switch {
		case err == nil:
			row = prev
			return nil
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		// One pending request per step (the partial unique index of migration 00013): an expired one leaves
		// it first, stored as expired.
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE approvals SET status = 'expired' WHERE `+binding+` AND expires_at <= ?`), append(args, nowUS)...); err != nil {
			return err
		}
		res, err := tx.NamedExecContext(ctx, `INSERT INTO approvals (`+approvalCols+`) VALUES (:id, :agent_name, :control_id,
			:control_version, :control_name, :step_type, :step_name, :stage, :payload_hash, :step, :message, :approvers,
			:status, :ttl_seconds, :created_at, :expires_at, :decided_at, :decided_by, :decided_via, :comment, :grant_expires_at,
			:used_at, :used_execution_id, :further_controls, :control_set) ON CONFLICT DO NOTHING`, row)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			created = err == nil
			return err
		}
		// Another replica opened the step's request at the same moment (PostgreSQL waited for its commit):
		// that one is the request.
		return tx.GetContext(ctx, &row, s.q(`SELECT `+approvalCols+` FROM approvals WHERE `+binding), args...)
	})
	if err != nil {
		return guard.ApprovalRecord{}, false, err
	}
	return row.record(now()), created, nil
}

// GetApproval implements guard.ApprovalStore.
func (s *Store) GetApproval(ctx context.Context, id string) (guard.ApprovalRecord, error) {
	var row approvalRow
	err := s.r.GetContext(ctx, &row, s.q(`SELECT `+approvalCols+` FROM approvals WHERE id = ?`), id)
	if errors.Is(err, sql.ErrNoRows) {
		return guard.ApprovalRecord{}, guard.ErrApprovalNotFound
	}
	if err != nil {
		return guard.ApprovalRecord{}, mapErr(err)
	}
	return row.record(now()), nil
}

// ListApprovals implements guard.ApprovalStore: pending (unexpired) requests first, then the others,
// each newest first.
func (s *Store) ListApprovals(ctx context.Context, q guard.ApprovalQuery) ([]guard.ApprovalRecord, error) {
	nowUS := now()
	where, args := "1 = 1", []any{}
	if q.AgentName != "" {
		where, args = where+` AND agent_name = ?`, append(args, q.AgentName)
	}
	if q.ControlID != 0 {
		// The requests that cover the control, first or further (control_set is "id:version,...").
		where, args = where+` AND (control_id = ? OR ',' || control_set LIKE ?)`,
			append(args, q.ControlID, "%,"+strconv.FormatInt(q.ControlID, 10)+":%")
	}
	if q.PayloadHash != "" {
		where, args = where+` AND payload_hash = ?`, append(args, q.PayloadHash)
	}
	if sc, scArgs := scopeCond(`agent_name`, q.Scope); sc != "" {
		where, args = where+` AND `+sc, append(args, scArgs...)
	}
	switch q.Status {
	case "":
	case guard.ApprovalPending:
		where, args = where+` AND status = 'pending' AND expires_at > ?`, append(args, nowUS)
	case guard.ApprovalExpired:
		where, args = where+` AND (status = 'expired' OR (status = 'pending' AND expires_at <= ?))`, append(args, nowUS)
	case guard.ApprovalApproved, guard.ApprovalRejected:
		where, args = where+` AND status = ?`, append(args, q.Status)
	default:
		return nil, fmt.Errorf("store: unknown approval status %q", q.Status)
	}
	limit := q.Limit
	if limit <= 0 || limit > maxLimit {
		limit = defaultLimit
	}
	args = append(args, nowUS, limit)
	var rows []approvalRow
	err := s.r.SelectContext(ctx, &rows, s.q(`SELECT `+approvalCols+` FROM approvals WHERE `+where+`
		ORDER BY CASE WHEN status = 'pending' AND expires_at > ? THEN 0 ELSE 1 END, created_at DESC, id LIMIT ?`), args...)
	if err != nil {
		return nil, mapErr(err)
	}
	out := make([]guard.ApprovalRecord, len(rows))
	for i := range rows {
		out[i] = rows[i].record(nowUS)
	}
	return out, nil
}

// DecideApproval implements guard.ApprovalStore. The UPDATE's condition makes the decision atomic: of
// two approvers deciding at once, one wins and the other gets ErrApprovalDecided.
func (s *Store) DecideApproval(ctx context.Context, id string, d guard.ApprovalDecision) (guard.ApprovalRecord, error) {
	at := d.At
	if at.IsZero() {
		at = time.Now()
	}
	atUS := at.UnixMicro()
	status := guard.ApprovalRejected
	if d.Approve {
		status = guard.ApprovalApproved
	}
	var n int64
	err := s.writeTx(ctx, func(tx *sqlx.Tx) error {
		// The grant runs for the request's TTL from the decision (NULL for a rejection).
		res, err := tx.ExecContext(ctx, s.q(`UPDATE approvals SET status = ?, decided_at = ?, decided_by = ?, decided_via = ?, comment = ?,
			grant_expires_at = CASE WHEN ? THEN ? + CAST(ttl_seconds AS BIGINT) * 1000000 ELSE NULL END
			WHERE id = ? AND status = 'pending' AND expires_at > ?`),
			status, atUS, clean(d.DecidedBy), clean(d.Via), clean(d.Comment), d.Approve, atUS, id, atUS)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return guard.ApprovalRecord{}, err
	}
	rec, err := s.GetApproval(ctx, id)
	if err != nil {
		return rec, err
	}
	if n == 0 {
		return rec, guard.ErrApprovalDecided
	}
	return rec, nil
}

// ConsumeApproval implements guard.ApprovalStore: one conditional UPDATE, so that of concurrent consumers
// (on one replica or several sharing the database) exactly one sees a row changed.
func (s *Store) ConsumeApproval(ctx context.Context, id, executionID string, at time.Time) (bool, error) {
	atUS := at.UnixMicro()
	res, err := s.w.ExecContext(ctx, s.q(`UPDATE approvals SET used_at = ?, used_execution_id = ?
		WHERE id = ? AND status = 'approved' AND used_at IS NULL AND grant_expires_at > ?`), atUS, clean(executionID), id, atUS)
	if err != nil {
		return false, mapErr(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, mapErr(err)
	}
	return n == 1, nil
}

// approvalSecretName is the row of server_secrets that keys grant MACs (migration 00008).
const approvalSecretName = "approval_hmac"

// ApprovalKey implements guard.ApprovalStore: the database's grant secret, read once and then cached.
func (s *Store) ApprovalKey(ctx context.Context) ([]byte, error) {
	s.cursorMu.Lock()
	defer s.cursorMu.Unlock()
	if s.approvalSecret != nil {
		return s.approvalSecret, nil
	}
	var v string
	if err := s.r.GetContext(ctx, &v, s.q(`SELECT value FROM server_secrets WHERE name = ?`), approvalSecretName); err != nil {
		return nil, mapErr(err)
	}
	if len(v) < 32 {
		return nil, fmt.Errorf("store: the approval secret of this database is too short")
	}
	s.approvalSecret = []byte(v)
	return s.approvalSecret, nil
}
