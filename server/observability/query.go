package observability

import (
	"bytes"
	"net/http"
	"slices"
	"strconv"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/internal/timeparam"
	"github.com/guardrail-control/guard/server/problem"
)

// QueryRequest is the body of POST /observability/events/query; every field is optional.
type QueryRequest struct {
	AgentName   string   `json:"agent_name"`
	ControlIDs  []int64  `json:"control_ids"`
	Actions     []string `json:"actions"`
	Matched     *bool    `json:"matched"`
	Errored     *bool    `json:"errored"`
	CheckStages []string `json:"check_stages"`
	StepTypes   []string `json:"step_types"`
	TraceID     string   `json:"trace_id"`
	Shadow      *bool    `json:"shadow"` // true: only shadow events; false: only enforced ones
	SessionID   string   `json:"session_id"`
	StartTime   *string  `json:"start_time"`
	EndTime     *string  `json:"end_time"`
	Limit       *int     `json:"limit"`
	Offset      *int     `json:"offset"`
}

// QueryResponse is the answer of POST /observability/events/query.
type QueryResponse struct {
	Events []guard.Event `json:"events"`
	Total  int           `json:"total"`
	Limit  int           `json:"limit"`
	Offset int           `json:"offset"`
}

// queryOut is QueryResponse as written, the events with the reference's fields (refshape.go).
type queryOut struct {
	Events []eventOut `json:"events"`
	Total  int        `json:"total"`
	Limit  int        `json:"limit"`
	Offset int        `json:"offset"`
}

// QueryEvents filters stored events, newest first, one page at a time. An empty body asks for the
// newest 100 events. Events buffered before the query are written first (catchUp, bounded), so an
// event this server acknowledged is seen.
func (a *API) QueryEvents(w http.ResponseWriter, r *http.Request) {
	if !a.available(w, r, false) {
		return
	}
	b, err := problem.ReadBody(r)
	if err != nil {
		problem.Write(w, r, a.logger(), err)
		return
	}
	var req QueryRequest
	if len(bytes.TrimSpace(b)) > 0 {
		ig, err := problem.DecodeLenientBytes(b, &req)
		if err != nil {
			problem.Write(w, r, a.logger(), err)
			return
		}
		NoteIgnored(a.Metrics, a.Logger, w, r, ig)
	}
	q, err := req.toQuery()
	if err == nil {
		q.Scope, err = a.scoped(r.Context(), q.AgentName, "agent_name")
	}
	if err != nil {
		problem.Write(w, r, a.logger(), err)
		return
	}
	a.catchUp(w, r)
	events, total, err := a.Store.QueryEvents(r.Context(), q)
	if err != nil {
		problem.Write(w, r, a.logger(), err)
		return
	}
	if events == nil {
		events = []guard.Event{}
	}
	problem.Respond(w, r, a.logger(), http.StatusOK, queryOut{Events: toEventsOut(events), Total: total, Limit: q.Limit, Offset: q.Offset})
}

// toQuery validates the request (every problem at once) and turns it into a store query.
func (req *QueryRequest) toQuery() (guard.EventQuery, error) {
	q := guard.EventQuery{
		ControlIDs: req.ControlIDs,
		Matched:    req.Matched,
		Shadow:     req.Shadow,
		Errored:    req.Errored,
		StepTypes:  req.StepTypes,
		TraceID:    req.TraceID,
		SessionID:  req.SessionID,
		Limit:      DefaultQueryLimit,
	}
	if ps := req.checkLimits(); len(ps) > 0 {
		return guard.EventQuery{}, problem.Validation("the query is not valid", ps...)
	}
	var ps []guard.Problem
	if req.AgentName != "" {
		name, err := guard.NormalizeAgentName(req.AgentName)
		if err != nil {
			ps = append(ps, guard.Problem{Field: "agent_name", Code: "invalid", Message: err.Error()})
		}
		q.AgentName = name
	}
	for i, s := range req.Actions {
		d, ok := parseAction(s)
		if !ok {
			ps = append(ps, guard.Problem{Field: "actions." + strconv.Itoa(i), Code: "enum",
				Message: "must be one of allow, deny, steer, warn, log, observe"})
			continue
		}
		// log and observe are one action under two names: either filter finds both.
		switch d {
		case guard.DecisionLog, guard.DecisionObserve:
			if !slices.Contains(q.Actions, guard.DecisionLog) {
				q.Actions = append(q.Actions, guard.DecisionLog, guard.DecisionObserve)
			}
		default:
			if !slices.Contains(q.Actions, d) {
				q.Actions = append(q.Actions, d)
			}
		}
	}
	for i, s := range req.CheckStages {
		st := guard.Stage(s)
		if !st.Valid() {
			ps = append(ps, guard.Problem{Field: "check_stages." + strconv.Itoa(i), Code: "enum", Message: "must be one of pre, post"})
			continue
		}
		q.CheckStages = append(q.CheckStages, st)
	}
	parseTime := func(field string, s *string) *time.Time {
		if s == nil {
			return nil
		}
		t, err := timeparam.Parse(*s)
		if err != nil {
			code, msg := timeparam.Problem(err)
			ps = append(ps, guard.Problem{Field: field, Code: code, Message: msg})
			return nil
		}
		t = t.UTC()
		return &t
	}
	q.StartTime = parseTime("start_time", req.StartTime)
	q.EndTime = parseTime("end_time", req.EndTime)
	if q.StartTime != nil && q.EndTime != nil && q.EndTime.Before(*q.StartTime) {
		ps = append(ps, guard.Problem{Field: "end_time", Code: "range", Message: "must not be before start_time"})
	}
	if req.Limit != nil {
		if *req.Limit < 1 || *req.Limit > MaxQueryLimit {
			ps = append(ps, guard.Problem{Field: "limit", Code: "range", Message: "must be between 1 and 1000"})
		}
		q.Limit = *req.Limit
	}
	if req.Offset != nil {
		if *req.Offset < 0 {
			ps = append(ps, guard.Problem{Field: "offset", Code: "range", Message: "must not be negative"})
		}
		q.Offset = *req.Offset
	}
	if len(ps) > 0 {
		return guard.EventQuery{}, problem.Validation("the query is not valid", ps...)
	}
	return q, nil
}
