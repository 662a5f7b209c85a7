package store

import (
	"context"
	"database/sql"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	guard "github.com/guardrail-control/guard"
)

const eventCols = `control_execution_id, trace_id, span_id, agent_name, control_id, control_name, check_stage, step_type,
	step_name, action, matched, confidence, ts, duration_ms, evaluator_name, selector_path, error_message, source, metadata, shadow,
	control_version, key_name, session_id`

const (
	eventColCount = 23
	// eventChunk rows per INSERT: 500 * 23 = 11,500 parameters, far below SQLite's 32,766 and
	// PostgreSQL's 65,535.
	eventChunk = 500
	// Query limits of POST /observability/events/query.
	defaultEventLimit = 100
	maxEventLimit     = 1000
)

// InsertEvents stores a batch of events in one transaction, with multi-row INSERTs, and adds them to the
// per-minute aggregates that Stats reads. Events are records, not references: any agent name and control
// id is accepted. An event without an execution id gets a random one; one without a timestamp gets the
// current time.
//
// Ingest is idempotent: an event whose control_execution_id is already stored (the server's own copy of
// an evaluation and the copy a client posts, or a retried batch), or repeats an earlier event of the
// batch, is skipped, and only the events actually stored count in the aggregates.
func (s *Store) InsertEvents(ctx context.Context, events []guard.Event) error {
	_, err := s.InsertEventsCounted(ctx, events)
	return err
}

// InsertEventsCounted is InsertEvents that also returns how many events were stored (the rest were
// duplicates).
func (s *Store) InsertEventsCounted(ctx context.Context, events []guard.Event) (int, error) {
	if len(events) == 0 {
		return 0, nil
	}
	events, ids := uniqueEvents(events)
	ts := make([]int64, len(events))
	for i := range events {
		ts[i] = eventTime(&events[i])
	}
	full := s.insertFullStmt(ctx)
	stored := 0
	err := s.writeTx(ctx, func(tx *sqlx.Tx) error {
		inserted := make(map[string]bool, len(events))
		// One argument slice for every chunk of the batch (a full chunk's is 10,000 values).
		args := make([]any, 0, min(len(events), eventChunk)*eventColCount)
		for start := 0; start < len(events); start += eventChunk {
			chunk := events[start:min(start+eventChunk, len(events))]
			args = args[:0]
			for i := range chunk {
				var err error
				if args, err = appendEventArgs(args, &chunk[i], ids[start+i], ts[start+i]); err != nil {
					return err
				}
			}
			var rows *sql.Rows
			var err error
			if len(chunk) == eventChunk && full != nil {
				rows, err = tx.StmtContext(ctx, full).QueryContext(ctx, args...)
			} else {
				rows, err = tx.QueryContext(ctx, s.insertEventsSQL(len(chunk)), args...)
			}
			if err != nil {
				return err
			}
			if err := collectIDs(rows, inserted); err != nil {
				return err
			}
		}
		// Only what was stored goes into the aggregates (usually the whole batch).
		keep, keepTS := events, ts
		if len(inserted) < len(events) {
			keep, keepTS = make([]guard.Event, 0, len(inserted)), make([]int64, 0, len(inserted))
			for i := range events {
				if inserted[clean(ids[i])] {
					keep, keepTS = append(keep, events[i]), append(keepTS, ts[i])
				}
			}
		}
		stored = len(keep)
		return s.upsertRollups(ctx, tx, keep, keepTS)
	})
	if err != nil {
		return 0, err
	}
	return stored, nil
}

// uniqueEvents gives every event its execution id (a random one when it has none) and drops the events
// that repeat an id earlier in the batch, keeping the first.
func uniqueEvents(events []guard.Event) ([]guard.Event, []string) {
	ids := make([]string, len(events))
	seen := make(map[string]bool, len(events))
	out := events[:0:0]
	dup := false
	for i := range events {
		id := events[i].ControlExecutionID
		if id == "" {
			id = uuid.NewString()
		}
		ids[i] = id
		if seen[clean(id)] {
			dup = true
		}
		seen[clean(id)] = true
	}
	if !dup {
		return events, ids
	}
	keptIDs := make([]string, 0, len(events))
	clear(seen)
	for i := range events {
		if k := clean(ids[i]); !seen[k] {
			seen[k] = true
			out = append(out, events[i])
			keptIDs = append(keptIDs, ids[i])
		}
	}
	return out, keptIDs
}

// collectIDs reads the ids RETURNING gave back (the rows actually inserted) into set and closes rows.
func collectIDs(rows *sql.Rows, set map[string]bool) error {
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		set[id] = true
	}
	return rows.Err()
}

// insertFullStmt returns the prepared INSERT of a full chunk, preparing it on first use, or nil when it
// cannot be prepared now (the caller then runs the statement text; the next call tries again).
func (s *Store) insertFullStmt(ctx context.Context) *sql.Stmt {
	s.insertFullMu.Lock()
	defer s.insertFullMu.Unlock()
	if s.insertFull == nil {
		st, err := s.w.PrepareContext(context.WithoutCancel(ctx), s.insertEventsSQL(eventChunk))
		if err != nil {
			return nil
		}
		s.insertFull = st
	}
	return s.insertFull
}

// eventTime is the stored timestamp of an event: its own, or now when it has none.
func eventTime(e *guard.Event) int64 {
	if e.Timestamp.IsZero() {
		return time.Now().UnixMicro()
	}
	return e.Timestamp.UnixMicro()
}

func (s *Store) insertEventsSQL(rows int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO events (` + eventCols + `) VALUES `)
	row := `(` + strings.Repeat(`?, `, eventColCount-1) + `?)`
	for i := range rows {
		if i > 0 {
			b.WriteString(`, `)
		}
		b.WriteString(row)
	}
	b.WriteString(` ON CONFLICT (control_execution_id) DO NOTHING RETURNING control_execution_id`)
	return s.q(b.String())
}

// appendEventArgs appends the eventColCount arguments of one event's row to args.
func appendEventArgs(args []any, e *guard.Event, id string, ts int64) ([]any, error) {
	// NaN and infinities are not stored (SQLite would turn NaN into NULL and refuse the row, failing the
	// whole batch again and again): no duration, and a confidence of 0.
	var dur any
	if d := e.ExecutionDurationMS; d != nil && !math.IsNaN(*d) && !math.IsInf(*d, 0) {
		dur = *d
	}
	conf := e.Confidence
	if math.IsNaN(conf) || math.IsInf(conf, 0) {
		conf = 0
	}
	md, err := mapArg(e.Metadata)
	if err != nil {
		return args, err
	}
	if md != nil {
		md = cleanJSON(md.(string))
	}
	return append(args, clean(id), clean(e.TraceID), clean(e.SpanID), clean(e.AgentName), e.ControlID, clean(e.ControlName),
		clean(string(e.CheckStage)), clean(e.StepType), clean(e.StepName), clean(string(e.Action)), e.Matched, conf,
		ts, dur, clean(e.EvaluatorName), clean(e.SelectorPath), clean(e.ErrorMessage), clean(e.Source), md, e.Shadow, e.ControlVersion, clean(e.KeyName), clean(e.SessionID)), nil
}

type eventRow struct {
	ID                 int64           `db:"id"`
	ControlExecutionID string          `db:"control_execution_id"`
	TraceID            string          `db:"trace_id"`
	SpanID             string          `db:"span_id"`
	AgentName          string          `db:"agent_name"`
	ControlID          int64           `db:"control_id"`
	ControlName        string          `db:"control_name"`
	CheckStage         string          `db:"check_stage"`
	StepType           string          `db:"step_type"`
	StepName           string          `db:"step_name"`
	Action             string          `db:"action"`
	Matched            bool            `db:"matched"`
	Confidence         float64         `db:"confidence"`
	TS                 int64           `db:"ts"`
	DurationMS         sql.NullFloat64 `db:"duration_ms"`
	EvaluatorName      string          `db:"evaluator_name"`
	SelectorPath       string          `db:"selector_path"`
	ErrorMessage       string          `db:"error_message"`
	Source             string          `db:"source"`
	Metadata           []byte          `db:"metadata"`
	Shadow             bool            `db:"shadow"`
	ControlVersion     int             `db:"control_version"`
	KeyName            string          `db:"key_name"`
	SessionID          string          `db:"session_id"`
}

func (r *eventRow) event() (guard.Event, error) {
	e := guard.Event{ControlExecutionID: r.ControlExecutionID, TraceID: r.TraceID, SpanID: r.SpanID, AgentName: r.AgentName,
		ControlID: r.ControlID, ControlName: r.ControlName, CheckStage: guard.Stage(r.CheckStage), StepType: r.StepType,
		StepName: r.StepName, Action: guard.Decision(r.Action), Matched: r.Matched, Confidence: r.Confidence,
		Timestamp: toTime(r.TS), EvaluatorName: r.EvaluatorName, SelectorPath: r.SelectorPath,
		ErrorMessage: r.ErrorMessage, Source: r.Source, Shadow: r.Shadow, ControlVersion: r.ControlVersion, KeyName: r.KeyName, SessionID: r.SessionID}
	// Rows written before the server checked these numbers may hold infinities (PostgreSQL also NaN):
	// they are left out, so that the event can still be encoded as JSON.
	if d := r.DurationMS.Float64; r.DurationMS.Valid && !math.IsNaN(d) && !math.IsInf(d, 0) {
		e.ExecutionDurationMS = &d
	}
	if math.IsNaN(e.Confidence) || math.IsInf(e.Confidence, 0) {
		e.Confidence = 0
	}
	var err error
	e.Metadata, err = scanMap(r.Metadata)
	return e, err
}

// eventWhere builds the WHERE clause of an event query.
func eventWhere(q *guard.EventQuery) (string, []any) {
	where, args := []string{`1 = 1`}, []any{}
	in := func(col string, n int) string {
		return col + ` IN (` + strings.TrimSuffix(strings.Repeat(`?, `, n), `, `) + `)`
	}
	if q.AgentName != "" {
		where, args = append(where, `agent_name = ?`), append(args, clean(q.AgentName))
	}
	if sc, scArgs := scopeCond(`agent_name`, q.Scope); sc != "" {
		where, args = append(where, sc), append(args, scArgs...)
	}
	if len(q.ControlIDs) > 0 {
		where = append(where, in(`control_id`, len(q.ControlIDs)))
		for _, id := range q.ControlIDs {
			args = append(args, id)
		}
	}
	if len(q.Actions) > 0 {
		where = append(where, in(`action`, len(q.Actions)))
		for _, a := range q.Actions {
			args = append(args, clean(string(a)))
		}
	}
	if q.Matched != nil {
		where, args = append(where, `matched = ?`), append(args, *q.Matched)
	}
	if q.Shadow != nil {
		where, args = append(where, `shadow = ?`), append(args, *q.Shadow)
	}
	if q.Errored != nil {
		if *q.Errored {
			where = append(where, `error_message <> ''`)
		} else {
			where = append(where, `error_message = ''`)
		}
	}
	if len(q.CheckStages) > 0 {
		where = append(where, in(`check_stage`, len(q.CheckStages)))
		for _, st := range q.CheckStages {
			args = append(args, clean(string(st)))
		}
	}
	if len(q.StepTypes) > 0 {
		where = append(where, in(`step_type`, len(q.StepTypes)))
		for _, t := range q.StepTypes {
			args = append(args, clean(t))
		}
	}
	if q.TraceID != "" {
		// The literal predicate lets both planners use the partial index events_trace.
		where, args = append(where, `trace_id = ? AND trace_id <> ''`), append(args, clean(q.TraceID))
	}
	if q.SessionID != "" {
		// The literal predicate lets both planners use the partial index events_session.
		where, args = append(where, `session_id = ? AND session_id <> ''`), append(args, clean(q.SessionID))
	}
	if q.StartTime != nil {
		where, args = append(where, `ts >= ?`), append(args, q.StartTime.UnixMicro())
	}
	if q.EndTime != nil {
		where, args = append(where, `ts < ?`), append(args, q.EndTime.UnixMicro())
	}
	return strings.Join(where, ` AND `), args
}

// checkEventQuery refuses lists longer than guard.MaxEventQueryList: each value is an SQL parameter.
func checkEventQuery(q *guard.EventQuery) error {
	var ps []guard.Problem
	for _, l := range []struct {
		field string
		n     int
	}{{"control_ids", len(q.ControlIDs)}, {"actions", len(q.Actions)}, {"check_stages", len(q.CheckStages)}, {"step_types", len(q.StepTypes)}} {
		if l.n > guard.MaxEventQueryList {
			ps = append(ps, guard.Problem{Field: l.field, Code: "max_items",
				Message: "must hold at most " + strconv.Itoa(guard.MaxEventQueryList) + " values"})
		}
	}
	if len(ps) > 0 {
		return &guard.ValidationError{Problems: ps}
	}
	return nil
}

// QueryEvents returns the events matching q, newest first, and how many match in all. The limit defaults
// to 100 and is clamped to 1..1000; a negative offset counts as 0. StartTime is inclusive, EndTime
// exclusive.
func (s *Store) QueryEvents(ctx context.Context, q guard.EventQuery) ([]guard.Event, int, error) {
	if err := checkEventQuery(&q); err != nil {
		return nil, 0, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = defaultEventLimit
	}
	limit = min(limit, maxEventLimit)
	offset := max(q.Offset, 0)
	cond, args := eventWhere(&q)
	// The count and the page come from one snapshot, so total always agrees with the rows while
	// events are being written.
	var total int
	var rows []eventRow
	err := s.readTx(ctx, func(tx *sqlx.Tx) error {
		if err := tx.GetContext(ctx, &total, s.q(`SELECT COUNT(*) FROM events WHERE `+cond), args...); err != nil {
			return err
		}
		return tx.SelectContext(ctx, &rows, s.q(`SELECT id, `+eventCols+` FROM events WHERE `+cond+
			` ORDER BY ts DESC, id DESC LIMIT ? OFFSET ?`), append(args, limit, offset)...)
	})
	if err != nil {
		return nil, 0, err
	}
	out := make([]guard.Event, 0, len(rows))
	for i := range rows {
		e, err := rows[i].event()
		if err != nil {
			return nil, 0, err
		}
		out = append(out, e)
	}
	return out, total, nil
}

// PruneEvents deletes the events older than before and returns how many it deleted, with their per-minute
// aggregates. It cuts at the start of the minute holding before (events of that minute stay), so that the
// aggregates and the events always cover the same minutes.
func (s *Store) PruneEvents(ctx context.Context, before time.Time) (int64, error) {
	minute := floorDiv(before.UnixMicro(), minuteUS)
	var n int64
	err := s.writeTx(ctx, func(tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(`DELETE FROM events WHERE ts < ?`), minute*minuteUS)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, s.q(`DELETE FROM event_rollups WHERE minute < ?`), minute)
		return err
	})
	return n, err
}
