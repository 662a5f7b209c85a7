package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"time"

	"go.uber.org/zap"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/internal/jsondiff"
	"github.com/guardrail-control/guard/internal/strictjson"
	"github.com/guardrail-control/guard/server/problem"
)

// The audit trail (docs/api.md "Audit trail"): every successful control-plane change is recorded with
// the name of the key that made it (KeyName), the time, the route and what changed. Recording happens
// after the change, on the request's goroutine, so the entry is stored when the client has its answer;
// a failure to record is logged at error (the change itself is made). Reads are never wrapped.

// auditActions are the routes whose successful calls are recorded, with the entry's action. Every route
// that changes policy must be here: TestAuditCoversEveryWrite fails on a changing route that is neither
// here nor in auditExempt.
var auditActions = map[string]string{
	"PUT " + apiPrefix + "/controls":                                          "control.created",
	"PATCH " + apiPrefix + "/controls/{control_id}":                           "control.updated",
	"DELETE " + apiPrefix + "/controls/{control_id}":                          "control.deleted",
	"PUT " + apiPrefix + "/controls/{control_id}/data":                        "control.data_replaced",
	"POST " + apiPrefix + "/controls/{control_id}/versions/{version}/restore": "control.restored",
	"POST " + apiPrefix + "/agents/{agent_name}/controls/{control_id}":        "agent.control_linked",
	"DELETE " + apiPrefix + "/agents/{agent_name}/controls/{control_id}":      "agent.control_unlinked",
	"PATCH " + apiPrefix + "/agents/{agent_name}":                             "agent.updated",
	// An agent registers at every start: recorded when it is new ("agent.registered") or the call changed
	// it ("agent.updated"), not when it registers the same again.
	"POST " + apiPrefix + "/agents/initAgent": "agent.registered",
	// A person's decision on an approval request (docs/approvals.md): "approval.approved" or
	// "approval.rejected", with the request's agent, control and payload hash.
	"POST " + apiPrefix + "/approvals/{approval_id}": "approval.decided",
}

// auditExempt are the non-GET routes that change no policy: drafts checked or tried, templates
// rendered, replays, the runtime's evaluations, events and captured steps, and the profiler.
var auditExempt = map[string]bool{
	"POST " + apiPrefix + "/controls/validate": true, "POST " + apiPrefix + "/controls/test": true,
	"POST " + apiPrefix + "/controls/try": true, "POST " + apiPrefix + "/control-templates/{template_name}/render": true,
	"POST " + apiPrefix + "/controls/replay": true, "POST " + apiPrefix + "/evaluation": true,
	"POST " + apiPrefix + "/steps/captured": true, "POST " + apiPrefix + "/observability/events": true,
	"POST " + apiPrefix + "/observability/events/query": true, "POST /debug/pprof/symbol": true,
	apiPrefix + "/policies": true, apiPrefix + "/policies/": true,
	// The reference's policy and binding routes, answered with a 404 that says what to use instead.
	apiPrefix + "/agents/{agent_name}/policies": true, apiPrefix + "/agents/{agent_name}/policies/": true,
	apiPrefix + "/agents/{agent_name}/policy": true, apiPrefix + "/agents/{agent_name}/policy/": true,
	apiPrefix + "/control-bindings": true, apiPrefix + "/control-bindings/": true,
	// The key routes record their own entries (runtime_keys.go, keyChanged): key.created, key.rotated and
	// key.revoked, with the key's name, role and agents and never the secret the answer carries.
	"POST " + apiPrefix + "/keys": true, "POST " + apiPrefix + "/keys/{key_name}/rotate": true,
	"DELETE " + apiPrefix + "/keys/{key_name}": true,
}

// maxAuditBody bounds what the recorder keeps of an answer (it reads ids and versions from it).
const maxAuditBody = 64 << 10

// auditWriter passes the answer through, keeping its status and the start of its body.
type auditWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (w *auditWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *auditWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if room := maxAuditBody - w.body.Len(); room > 0 {
		w.body.Write(b[:min(len(b), room)])
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController and noteRole reach the writer underneath.
func (w *auditWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// auditBefore is what the recorder reads before the change: the agents it reaches and an agent's state.
type auditBefore struct {
	agents    []string
	agentName string
	agent     map[string]any // nil: no such agent before
}

// audited wraps the handler of an audited route with the recorder; other routes are returned as they are.
func (s *Server) audited(rt route, h http.Handler) http.Handler {
	action, ok := auditActions[rt.pattern()]
	as, hasStore := s.store.(guard.AuditStore)
	if !ok || !hasStore {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		before := s.auditBefore(r)
		aw := &auditWriter{ResponseWriter: w}
		h.ServeHTTP(aw, r)
		if aw.status < 200 || aw.status > 299 {
			return
		}
		// The change is made: record it even if the client has gone.
		ctx := context.WithoutCancel(r.Context())
		e, record := s.auditEntry(ctx, r, action, before, aw.body.Bytes())
		if !record {
			return
		}
		e.RequestID = w.Header().Get(problem.RequestIDHeader) // stamped on every answer (middleware.go)
		if _, err := as.InsertAudit(ctx, e); err != nil {
			s.log.Error("audit entry not recorded", zap.String("action", e.Action), zap.String("key", e.KeyName),
				zap.String("path", e.Path), zap.Error(err))
		}
	})
}

// auditBefore reads, before the change, the agents the change reaches (an agent route's agent; the agents
// a control is linked to, which a delete or an unlink is about to change) and, for an agent route, the
// agent as it is.
func (s *Server) auditBefore(r *http.Request) auditBefore {
	var b auditBefore
	ctx := r.Context()
	switch {
	case r.PathValue("agent_name") != "":
		b.agentName = r.PathValue("agent_name")
	case r.Pattern == "POST "+apiPrefix+"/agents/initAgent":
		b.agentName = peekAgentName(r)
	}
	if b.agentName != "" {
		b.agents = []string{b.agentName}
		if r.PathValue("control_id") == "" { // an agent's own change: diff its state
			b.agent = s.agentState(ctx, b.agentName)
		}
		return b
	}
	if id, err := strconv.ParseInt(r.PathValue("control_id"), 10, 64); err == nil {
		if ss, ok := s.store.(scopeStore); ok {
			b.agents, _ = ss.ControlAgents(ctx, id)
		}
	}
	return b
}

// peekAgentName reads the agent's name from an initAgent body and puts the body back for the handler.
func peekAgentName(r *http.Request) string {
	if r.Body == nil {
		return ""
	}
	raw, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(raw))
	if err != nil {
		return ""
	}
	var req struct {
		Agent struct {
			Name string `json:"agent_name"`
		} `json:"agent"`
	}
	if strictjson.UnmarshalLenient(raw, &req) != nil { // "Agent" or "AGENT_NAME" is not the agent
		return ""
	}
	n, err := guard.NormalizeAgentName(req.Agent.Name)
	if err != nil {
		return ""
	}
	return n
}

// agentState is an agent as the audit trail compares it: nil when there is none.
func (s *Server) agentState(ctx context.Context, name string) map[string]any {
	a, steps, err := s.store.GetAgent(ctx, name)
	if err != nil {
		return nil
	}
	st := make([]string, 0, len(steps))
	for _, x := range steps {
		st = append(st, x.Type+"/"+x.Name)
	}
	return toJSONValue(map[string]any{"description": a.Description, "version": a.Version, "metadata": a.Metadata, "steps": st})
}

// toJSONValue is v as encoding/json decodes it into any: what jsondiff compares.
func toJSONValue(v any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// auditEntry builds the entry of a successful change; false when there is nothing to record (an agent
// registering again unchanged).
func (s *Server) auditEntry(ctx context.Context, r *http.Request, action string, before auditBefore, body []byte) (guard.AuditEntry, bool) {
	e := guard.AuditEntry{Time: time.Now(), KeyName: KeyName(r.Context()), Method: r.Method, Route: routePath(r.Pattern),
		Path: r.URL.Path, Action: action, Agents: before.agents}
	var answer struct {
		ControlID int64 `json:"control_id"`
		Version   int   `json:"version"`
	}
	_ = json.Unmarshal(body, &answer) // the handler's own JSON; absent fields stay zero
	id, _ := strconv.ParseInt(r.PathValue("control_id"), 10, 64)
	if id == 0 {
		id = answer.ControlID
	}
	e.ControlID = id
	if action == "approval.decided" {
		return approvalAuditEntry(e, body), true
	}
	switch {
	case before.agentName != "" && id == 0: // an agent's own change
		after := s.agentState(ctx, before.agentName)
		if before.agent == nil {
			e.Action = "agent.registered"
		} else if action == "agent.registered" {
			e.Action = "agent.updated"
		}
		e.Changes = diffLines(before.agent, after)
		if before.agent != nil && len(e.Changes) == 0 {
			return e, false
		}
	case id > 0:
		e.Version = answer.Version
		if e.Version == 0 {
			e.Version = s.latestVersion(ctx, id)
		}
		if before.agentName == "" { // a change of the control itself: the diff from the version before
			e.Changes = s.versionDiff(ctx, id, e.Version)
		}
		if action == "control.deleted" && json.Valid(body) {
			e.Detail = json.RawMessage(slices.Clone(body))
		}
	}
	if e.Changes == nil {
		e.Changes = []string{}
	}
	return e, true
}

// latestVersion is the control's newest version (a deleted control's too), 0 when unknown.
func (s *Server) latestVersion(ctx context.Context, id int64) int {
	vs, _, err := s.store.ListControlVersions(ctx, id, guard.PageRequest{Limit: 1})
	if err != nil || len(vs) == 0 {
		return 0
	}
	return vs[0].Version
}

// versionDiff lists what version v of control id changed from version v-1 (everything, for the first).
func (s *Server) versionDiff(ctx context.Context, id int64, v int) []string {
	if v <= 0 {
		return nil
	}
	cur, err := s.store.GetControlVersion(ctx, id, v)
	if err != nil {
		return nil
	}
	var prev map[string]any
	if v > 1 {
		if p, err := s.store.GetControlVersion(ctx, id, v-1); err == nil {
			prev = versionState(p)
		}
	}
	return diffLines(prev, versionState(cur))
}

func versionState(v guard.ControlVersion) map[string]any {
	return toJSONValue(map[string]any{"name": v.Name, "enabled": v.Enabled, "data": v.Data})
}

// diffLines is jsondiff between two states, key by key, one line per changed path.
func diffLines(before, after map[string]any) []string {
	keys := map[string]bool{}
	for k := range before {
		keys[k] = true
	}
	for k := range after {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	slices.Sort(sorted)
	out := []string{}
	for _, k := range sorted {
		for _, c := range jsondiff.Diff(k, before[k], after[k]) {
			out = append(out, c.String())
		}
	}
	return out
}

// auditRoutes is GET /api/v1/audit when the store keeps an audit trail.
func (s *Server) auditRoutes() []route {
	if _, ok := s.store.(guard.AuditStore); !ok {
		return nil
	}
	return []route{{method: "GET", path: apiPrefix + "/audit", level: levelRuntime, handler: http.HandlerFunc(s.listAudit)}}
}

// listAudit is GET /api/v1/audit: the audit trail, newest first, filtered by key_name, agent_name,
// control_id, action, since and until, a page at a time (limit, cursor). A scoped key reads the entries
// of its agents and of unlinked controls.
func (s *Server) listAudit(w http.ResponseWriter, r *http.Request) {
	as := s.store.(guard.AuditStore)
	q, pg, err := parseAuditQuery(r)
	if err != nil {
		s.writeErr(w, r, withCursorProblem(r, as, pg, err))
		return
	}
	if q.AgentName != "" {
		err = checkAgent(r.Context(), q.AgentName, "agent_name")
	}
	if err == nil {
		q.Scope, err = s.agentScope(r.Context())
	}
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	entries, info, err := as.ListAudit(r.Context(), q, pg)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if entries == nil {
		entries = []guard.AuditEntry{}
	}
	if q.Scope.Limited { // a scoped key sees no other agent's name, even of a control shared with one
		for i := range entries {
			entries[i].Agents = slices.DeleteFunc(entries[i].Agents, func(a string) bool { return !KeyAllowsAgent(r.Context(), a) })
			entries[i].Detail = nil
		}
	}
	problem.Respond(w, r, s.log, http.StatusOK, struct {
		Entries    []guard.AuditEntry `json:"entries"`
		Pagination listPage           `json:"pagination"`
	}{entries, toPage(info)})
}

// withCursorProblem adds the cursor's problem to the 422 of the other parameters of GET /audit, so that
// one answer names every bad parameter (docs/api.md): only the store can tell a cursor it issued, so a
// cursor beside other bad parameters is checked by asking for one entry of an empty scope.
func withCursorProblem(r *http.Request, as guard.AuditStore, pg guard.PageRequest, err error) error {
	var pe *problem.Error
	if pg.Cursor == "" || !errors.As(err, &pe) || pe.Status != http.StatusUnprocessableEntity {
		return err
	}
	for _, p := range pe.Problems {
		if p.Field == "cursor" {
			return err
		}
	}
	probe := guard.AuditQuery{Scope: guard.AgentScope{Limited: true}} // reads nothing of any agent
	if _, _, cerr := as.ListAudit(r.Context(), probe, guard.PageRequest{Cursor: pg.Cursor, Limit: 1}); errors.Is(cerr, guard.ErrBadCursor) {
		return problem.Validation(pe.Detail, append(pe.Problems, guard.Problem{Field: "cursor", Code: "invalid", Message: "not a cursor this server issued"})...)
	}
	return err
}

// parseAuditQuery reads the filters of GET /audit, naming every bad parameter at once.
func parseAuditQuery(r *http.Request) (guard.AuditQuery, guard.PageRequest, error) {
	qv := r.URL.Query()
	q := guard.AuditQuery{KeyName: qv.Get("key_name"), Action: qv.Get("action")}
	var probs []guard.Problem
	add := func(field, code, msg string) {
		probs = append(probs, guard.Problem{Field: field, Code: code, Message: msg})
	}
	if raw := qv.Get("agent_name"); raw != "" {
		n, err := guard.NormalizeAgentName(raw)
		if err != nil {
			add("agent_name", "invalid", err.Error())
		}
		q.AgentName = n
	}
	if raw := qv.Get("control_id"); raw != "" {
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || id <= 0 {
			add("control_id", "type", "must be a positive integer")
		}
		q.ControlID = id
	}
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{{"since", &q.Since}, {"until", &q.Until}} {
		if raw := qv.Get(f.name); raw != "" {
			t, err := time.Parse(time.RFC3339Nano, raw)
			if err != nil {
				add(f.name, "format", "must be an RFC 3339 date-time such as 2026-01-02T15:04:05Z")
			}
			*f.dst = t
		}
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Since.Before(q.Until) {
		add("since", "range", "must be before until")
	}
	pg := guard.PageRequest{Cursor: qv.Get("cursor"), Limit: defaultLimit}
	if n, prob := queryLimit(qv); prob != nil {
		probs = append(probs, *prob)
	} else {
		pg.Limit = n
	}
	if len(pg.Cursor) > 512 {
		add("cursor", "invalid", "not a cursor this server issued")
	}
	if len(probs) > 0 {
		return q, pg, problem.Validation("the audit request is not valid", probs...)
	}
	return q, pg, nil
}

// approvalAuditEntry completes the entry of an approval decision from the decided request (the answer):
// who the request was for, the control and version it was about, and what was decided on which payload.
func approvalAuditEntry(e guard.AuditEntry, body []byte) guard.AuditEntry {
	var rec guard.ApprovalRecord
	_ = json.Unmarshal(body, &rec) // the handler's own JSON
	e.Action = "approval." + rec.Status
	e.ControlID, e.Version = rec.ControlID, rec.ControlVersion
	if rec.AgentName != "" {
		e.Agents = []string{rec.AgentName}
	}
	e.Changes = []string{"~ status: \"pending\" -> \"" + rec.Status + "\""}
	detail, err := json.Marshal(map[string]any{"approval_id": rec.ID, "payload_hash": rec.PayloadHash,
		"step_type": rec.StepType, "step_name": rec.StepName, "stage": rec.Stage, "comment": rec.Comment,
		"decided_via": rec.DecidedVia})
	if err == nil {
		e.Detail = detail
	}
	return e
}
