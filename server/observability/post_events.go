package observability

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/google/uuid"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/internal/strictjson"
	"github.com/guardrail-control/guard/internal/timeparam"
	"github.com/guardrail-control/guard/server/problem"
)

// Length limits of event fields.
const (
	maxShortField    = 255
	maxSelectorPath  = 1024
	maxErrorMessage  = 8192 // longer error messages are truncated, not refused
	maxEventProblems = 100  // problems reported for one request at most
)

// PostEventsResponse is the 202 body of POST /observability/events (201 in durable mode, with stored).
// Received and Enqueued count every event of the request, duplicates included: an event whose
// control_execution_id is already stored is discarded when the buffer is written (store ingest is
// idempotent), so queries and statistics count it once.
type PostEventsResponse struct {
	Received int `json:"received"`
	Enqueued int `json:"enqueued"`
	Dropped  int `json:"dropped"`
	Stored   int `json:"stored,omitempty"` // durable mode: events committed before the answer
	// Status is the reference implementation's summary: queued (nothing dropped), partial, or failed
	// (everything dropped).
	Status string `json:"status"`
}

// ingestStatus is the Status of a reply.
func ingestStatus(enqueued, dropped int) string {
	switch {
	case dropped == 0:
		return "queued"
	case enqueued == 0:
		return "failed"
	}
	return "partial"
}

// PostEvents accepts 1 to 1000 events, validates every one (422 naming events.<i>.<field>; the batch is
// taken whole or not at all) and hands them to the recorder: 202 with how many were buffered and how
// many dropped because the buffer was full.
func (a *API) PostEvents(w http.ResponseWriter, r *http.Request) {
	if !a.available(w, r, true) {
		return
	}
	events, ig, err := decodeEvents(r)
	if err != nil {
		problem.Write(w, r, a.logger(), err)
		return
	}
	NoteIgnored(a.Metrics, a.Logger, w, r, ig)
	if err := a.checkEventAgents(r.Context(), events); err != nil {
		problem.Write(w, r, a.logger(), err)
		return
	}
	if a.KeyName != nil { // who posted them, whatever the body says
		name := a.KeyName(r.Context())
		for i := range events {
			events[i].KeyName = name
		}
	}
	a.admit(w, r, events)
}

// decodeEvents reads and validates the body of POST /observability/events. The body is decoded once,
// leniently (unknown fields are skipped and returned in Ignored), in the common case; only when that fails
// on a field is it decoded again event by event, to name the event the problem is in.
func decodeEvents(r *http.Request) ([]guard.Event, problem.Ignored, error) {
	b, err := problem.ReadBody(r)
	if err != nil {
		return nil, problem.Ignored{}, err
	}
	var body struct {
		Events *[]*eventWire `json:"events"`
	}
	ig, err := problem.DecodeLenientBytes(b, &body)
	if err != nil {
		if problem.From(err).Status != http.StatusUnprocessableEntity || problem.IsDuplicateKey(err) {
			return nil, ig, err
		}
		return nil, ig, locateDecodeError(b, err)
	}
	if err := checkCount(body.Events); err != nil {
		return nil, ig, err
	}
	in := *body.Events
	events := make([]guard.Event, len(in))
	var problems []guard.Problem
	for i, w := range in {
		at := "events." + strconv.Itoa(i)
		var ps []guard.Problem
		if w == nil {
			ps = []guard.Problem{{Field: at, Code: "type", Message: "must be an event object"}}
		} else {
			ps = w.validate(&events[i], at)
		}
		problems = appendProblems(problems, ps)
	}
	if len(problems) > 0 {
		return nil, ig, problem.Validation("some events are not valid; none of this request's events were recorded", problems...)
	}
	return events, ig, nil
}

// checkCount enforces 1 to MaxEventsPerRequest events.
func checkCount[T any](events *[]T) error {
	switch {
	case events == nil:
		return problem.Validation("the request needs an events array",
			guard.Problem{Field: "events", Code: "required", Message: "is required: an array of 1 to 1000 events"})
	case len(*events) == 0:
		return problem.Validation("the events array is empty",
			guard.Problem{Field: "events", Code: "range", Message: "must hold 1 to 1000 events"})
	case len(*events) > MaxEventsPerRequest:
		return problem.New(http.StatusRequestEntityTooLarge, problem.CodePayloadTooLarge,
			fmt.Sprintf("a request holds at most %d events and this one holds %d: split it into several requests",
				MaxEventsPerRequest, len(*events)))
	}
	return nil
}

// appendProblems keeps at most maxEventProblems problems.
func appendProblems(all, more []guard.Problem) []guard.Problem {
	if room := maxEventProblems - len(all); room < len(more) {
		more = more[:max(room, 0)]
	}
	return append(all, more...)
}

// locateDecodeError decodes the body again event by event to report the problems of the strict decoding
// with the index of their event (the JSON decoder names the field but not the array index).
func locateDecodeError(b []byte, first error) error {
	var body struct {
		Events *[]json.RawMessage `json:"events"`
	}
	if _, err := problem.DecodeLenientBytes(b, &body); err != nil {
		return err // the problem is outside the events
	}
	if err := checkCount(body.Events); err != nil {
		return err
	}
	var problems []guard.Problem
	for i, msg := range *body.Events {
		at := "events." + strconv.Itoa(i)
		var w *eventWire
		if err := strictjson.UnmarshalLenient(msg, &w); err != nil {
			problems = appendProblems(problems, []guard.Problem{decodeProblem(err, at)})
			continue
		}
		var ev guard.Event
		if w == nil {
			problems = appendProblems(problems, []guard.Problem{{Field: at, Code: "type", Message: "must be an event object"}})
		} else {
			problems = appendProblems(problems, w.validate(&ev, at))
		}
	}
	if len(problems) == 0 {
		return first
	}
	return problem.Validation("some events are not valid; none of this request's events were recorded", problems...)
}

// eventWire is an event as it arrives. A missing or null string is "" and counts as missing; control_id
// is a pointer because 0 is a value; confidence defaults to 0. Few pointers: fewer allocations per event.
type eventWire struct {
	ControlExecutionID  string          `json:"control_execution_id"`
	TraceID             string          `json:"trace_id"`
	SpanID              string          `json:"span_id"`
	SessionID           string          `json:"session_id"`
	AgentName           string          `json:"agent_name"`
	ControlID           *int64          `json:"control_id"`
	ControlName         string          `json:"control_name"`
	CheckStage          string          `json:"check_stage"`
	StepType            string          `json:"step_type"`
	AppliesTo           string          `json:"applies_to"` // the reference SDKs' name of the step type
	StepName            string          `json:"step_name"`
	Action              string          `json:"action"`
	Matched             bool            `json:"matched"`
	Confidence          float64         `json:"confidence"`
	Timestamp           string          `json:"timestamp"`
	ExecutionDurationMS *float64        `json:"execution_duration_ms"`
	EvaluatorName       string          `json:"evaluator_name"`
	SelectorPath        string          `json:"selector_path"`
	ErrorMessage        string          `json:"error_message"`
	Source              string          `json:"source"`
	Metadata            json.RawMessage `json:"metadata"`        // checked against the limits before it is decoded
	Shadow              bool            `json:"shadow"`          // the evaluation of a shadow control
	ControlVersion      int             `json:"control_version"` // the evaluated control's version; 0: not known
}

// validate checks the event, fills ev and returns its problems, fields prefixed by at.
func (in *eventWire) validate(ev *guard.Event, at string) []guard.Problem {
	var ps []guard.Problem
	add := func(field, code, message string) {
		ps = append(ps, guard.Problem{Field: at + "." + field, Code: code, Message: message})
	}

	switch {
	case in.ControlExecutionID == "":
		// The reference makes one when the client sends none; so does guard. The event is then not
		// idempotent on retry (a retried batch stores it again), as in the reference.
		ev.ControlExecutionID = uuid.NewString()
	default:
		if id, err := uuid.Parse(in.ControlExecutionID); err != nil || len(in.ControlExecutionID) > maxShortField {
			add("control_execution_id", "format", "must be a UUID")
		} else {
			// The canonical lower-case form: the id is the key of idempotent ingest, and the server's
			// recorder writes it so.
			ev.ControlExecutionID = id.String()
		}
	}
	if in.AgentName == "" {
		add("agent_name", "required", "is required")
	} else if name, err := guard.NormalizeAgentName(in.AgentName); err != nil {
		add("agent_name", "invalid", err.Error())
	} else {
		ev.AgentName = name
	}
	if in.ControlID == nil {
		add("control_id", "required", "is required")
	} else if *in.ControlID < 0 {
		add("control_id", "range", "must not be negative")
	} else {
		ev.ControlID = *in.ControlID
	}
	if in.CheckStage == "" {
		add("check_stage", "required", "is required: pre or post")
	} else if st := guard.Stage(in.CheckStage); !st.Valid() {
		add("check_stage", "enum", "must be one of pre, post")
	} else {
		ev.CheckStage = st
	}
	if in.Action == "" {
		add("action", "required", "is required")
	} else if d, ok := parseAction(in.Action); !ok {
		add("action", "enum", "must be one of allow, deny, steer, warn, log, observe")
	} else {
		ev.Action = d
	}
	if in.Timestamp == "" {
		add("timestamp", "required", "is required: an RFC 3339 date-time")
	} else if ts, err := timeparam.Parse(in.Timestamp); err != nil {
		code, msg := timeparam.Problem(err)
		add("timestamp", code, msg)
	} else {
		ev.Timestamp = ts.UTC()
	}
	ps = append(ps, in.checkNumbers(ev, at)...)
	switch in.Source {
	case "", SourceSDK:
		ev.Source = SourceSDK // posted events come from clients
	case SourceServer:
		add("source", "reserved", "server is reserved for the events the server records itself; omit source or send sdk")
	default:
		add("source", "enum", "must be sdk (or omitted)")
	}
	stepType := in.StepType
	if stepType == "" {
		stepType = stepTypeOf(in.AppliesTo)
	}
	for _, f := range []struct {
		name  string
		value string
		max   int
		dst   *string
	}{
		{"trace_id", in.TraceID, maxShortField, &ev.TraceID},
		{"span_id", in.SpanID, maxShortField, &ev.SpanID},
		{"session_id", in.SessionID, guard.MaxSessionIDBytes, &ev.SessionID},
		{"control_name", in.ControlName, maxShortField, &ev.ControlName},
		{"step_type", stepType, maxShortField, &ev.StepType},
		{"step_name", in.StepName, maxShortField, &ev.StepName},
		{"evaluator_name", in.EvaluatorName, maxShortField, &ev.EvaluatorName},
		{"selector_path", in.SelectorPath, maxSelectorPath, &ev.SelectorPath},
	} {
		if len(f.value) > f.max {
			add(f.name, "max_length", fmt.Sprintf("must be at most %d bytes long", f.max))
			continue
		}
		*f.dst = f.value
	}
	ps = append(ps, checkErrorMessage(in.ErrorMessage, ev, at)...)
	ev.Matched = in.Matched
	ev.Shadow = in.Shadow
	if in.ControlVersion < 0 {
		add("control_version", "range", "must be a version number (0 or more)")
	}
	ev.ControlVersion = in.ControlVersion
	var mps []guard.Problem
	ev.Metadata, mps = checkMetadata(in.Metadata, at)
	return append(ps, mps...)
}

// decodeProblem names the field of a JSON decoding error inside one event.
func decodeProblem(err error, at string) guard.Problem {
	var se *strictjson.Error
	if !errors.As(err, &se) {
		return guard.Problem{Field: at, Code: "invalid", Message: "is not a valid event object"}
	}
	field := at
	if se.Path != "" {
		field = at + "." + se.Path
	}
	switch {
	case se.Kind == strictjson.KindType && se.Path == "":
		return guard.Problem{Field: at, Code: "type", Message: "must be an event object"}
	case se.Kind == strictjson.KindRange:
		return guard.Problem{Field: field, Code: "range", Message: "is out of range"}
	case se.Kind == strictjson.KindType:
		return guard.Problem{Field: field, Code: "type", Message: "has the wrong type"}
	case se.Kind == strictjson.KindUnknown:
		return guard.Problem{Field: field, Code: "unknown_field", Message: "is not a known event field"}
	}
	return guard.Problem{Field: at, Code: "invalid", Message: "is not a valid event object"}
}

// stepTypeOf maps the reference SDKs' applies_to to guard's step type: llm_call is llm, tool_call is tool;
// any other value is taken as the step type itself (step types are open).
func stepTypeOf(appliesTo string) string {
	switch appliesTo {
	case "llm_call":
		return "llm"
	case "tool_call":
		return "tool"
	}
	return appliesTo
}

// parseAction accepts the decisions of the control language. observe is kept as written (the reference's
// clients read it back); statistics count it with log.
func parseAction(s string) (guard.Decision, bool) {
	switch d := guard.Decision(s); d {
	case guard.DecisionAllow, guard.DecisionDeny, guard.DecisionSteer, guard.DecisionWarn, guard.DecisionLog, guard.DecisionObserve:
		return d, true
	}
	return "", false
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
