package guard

import "time"

// Event is an observability record of one control evaluation. Events are records, not references: they
// are accepted for any agent name and control id.
type Event struct {
	ControlExecutionID string `json:"control_execution_id"`
	TraceID            string `json:"trace_id,omitempty"`
	SpanID             string `json:"span_id,omitempty"`
	AgentName          string `json:"agent_name"`
	ControlID          int64  `json:"control_id"`
	ControlName        string `json:"control_name"`
	// ControlVersion is the version of the control that was evaluated (0: not known, e.g. an event an
	// older client posted).
	ControlVersion int `json:"control_version,omitempty"`
	// KeyName is the name of the API key of the request that evaluated the step or posted the event
	// (server.KeyName; never the key), "" when authentication is off.
	KeyName             string         `json:"key_name,omitempty"`
	CheckStage          Stage          `json:"check_stage"`
	StepType            string         `json:"step_type"`
	StepName            string         `json:"step_name"`
	Action              Decision       `json:"action"`
	Matched             bool           `json:"matched"`
	Confidence          float64        `json:"confidence"`
	Timestamp           time.Time      `json:"timestamp"`
	ExecutionDurationMS *float64       `json:"execution_duration_ms,omitempty"`
	EvaluatorName       string         `json:"evaluator_name,omitempty"`
	SelectorPath        string         `json:"selector_path,omitempty"`
	ErrorMessage        string         `json:"error_message,omitempty"`
	Source              string         `json:"source"`
	Metadata            map[string]any `json:"metadata,omitempty"`
	// Shadow marks the evaluation of a shadow control: Action and Matched are what it would have
	// decided; it was not part of the decision the agent got. Statistics count shadow events apart.
	Shadow bool `json:"shadow,omitempty"`
	// SessionID is the step's context.session_id (docs/control-language.md, "Sessions"); "" without one.
	SessionID string `json:"session_id,omitempty"`
}

// EventQuery filters events; zero fields do not filter. Results are newest first.
type EventQuery struct {
	AgentName   string     `json:"agent_name,omitempty"`
	ControlIDs  []int64    `json:"control_ids,omitempty"`
	Actions     []Decision `json:"actions,omitempty"`
	Matched     *bool      `json:"matched,omitempty"`
	Errored     *bool      `json:"errored,omitempty"` // true: only events with an error message; false: only those without
	CheckStages []Stage    `json:"check_stages,omitempty"`
	StepTypes   []string   `json:"step_types,omitempty"`
	TraceID     string     `json:"trace_id,omitempty"`
	Shadow      *bool      `json:"shadow,omitempty"`     // only shadow events (true) or only enforced ones (false)
	SessionID   string     `json:"session_id,omitempty"` // only the events of this session (with AgentName: of this agent)
	StartTime   *time.Time `json:"start_time,omitempty"`
	EndTime     *time.Time `json:"end_time,omitempty"`
	Limit       int        `json:"limit"`
	Offset      int        `json:"offset"`
	// Scope keeps the events of these agents only (a scoped key's); set by the server, never by the body.
	Scope AgentScope `json:"-"`
}

// StatsQuery asks for the statistics of one agent (every agent when AgentName is empty) over
// [Since, Until), optionally of one control, with an optional time series of buckets of the given width.
type StatsQuery struct {
	AgentName string // "": every agent, with a breakdown per agent in Stats.Agents
	ControlID *int64
	Since     time.Time
	Until     time.Time
	Bucket    time.Duration // 0: no time series
	// P95 asks for StatsTotals.P95DurationMS (not computed with ControlID): an extra bounded read of the
	// events, so only callers that show it pay for it.
	P95 bool
	// Scope keeps the events of these agents only (a scoped key's), with AgentName or without.
	Scope AgentScope
}

// ActionCounts counts matched events by action.
type ActionCounts struct {
	Allow int64 `json:"allow"`
	Deny  int64 `json:"deny"`
	Steer int64 `json:"steer"`
	Warn  int64 `json:"warn"`
	Log   int64 `json:"log"`
}

// StatsTotals aggregates every event of the range.
type StatsTotals struct {
	ExecutionCount int64        `json:"execution_count"`
	MatchCount     int64        `json:"match_count"`
	NonMatchCount  int64        `json:"non_match_count"`
	ErrorCount     int64        `json:"error_count"`
	ActionCounts   ActionCounts `json:"action_counts"`
	// P95DurationMS is the 95th percentile (nearest rank) of the evaluation durations of the newest
	// MaxP95Sample events of the range that carry one (all of them when there are fewer), computed when
	// the query asks for it (StatsQuery.P95) and names no control; P95SampleSize says how many durations it was taken over. Both are
	// omitted when no event of the range has a duration.
	P95DurationMS *float64         `json:"p95_duration_ms,omitempty"`
	P95SampleSize int64            `json:"p95_sample_size,omitempty"`
	Timeseries    []StatsTimePoint `json:"timeseries,omitempty"`
}

// MaxP95Sample bounds the durations StatsTotals.P95DurationMS is computed over: the newest events of the
// range, read newest first over the events' time index, so that the cost does not grow with the range.
const MaxP95Sample = 10_000

// AgentStats aggregates the events of one agent (in statistics across every agent).
type AgentStats struct {
	AgentName      string       `json:"agent_name"`
	ExecutionCount int64        `json:"execution_count"`
	MatchCount     int64        `json:"match_count"`
	NonMatchCount  int64        `json:"non_match_count"`
	ErrorCount     int64        `json:"error_count"`
	ActionCounts   ActionCounts `json:"action_counts"`
}

// StatsTimePoint is one bucket of the time series.
type StatsTimePoint struct {
	Timestamp      time.Time    `json:"timestamp"`
	ExecutionCount int64        `json:"execution_count"`
	MatchCount     int64        `json:"match_count"`
	NonMatchCount  int64        `json:"non_match_count"`
	ErrorCount     int64        `json:"error_count"`
	ActionCounts   ActionCounts `json:"action_counts"`
}

// ControlStats aggregates the events of one control.
type ControlStats struct {
	ControlID      int64        `json:"control_id"`
	ControlName    string       `json:"control_name"`
	ExecutionCount int64        `json:"execution_count"`
	MatchCount     int64        `json:"match_count"`
	NonMatchCount  int64        `json:"non_match_count"`
	ErrorCount     int64        `json:"error_count"`
	ActionCounts   ActionCounts `json:"action_counts"`
	AvgConfidence  float64      `json:"avg_confidence"`
	AvgDurationMS  float64      `json:"avg_duration_ms"`
	// Shadow marks the statistics of a control's shadow events: ActionCounts.Deny of ExecutionCount
	// steps is "would have denied N of M steps".
	Shadow bool `json:"shadow,omitempty"`
}

// Stats is the answer to a StatsQuery. Totals and Controls count the enforced evaluations (what the
// agents got); Shadow holds, per control, the evaluations of shadow controls (never in Totals).
type Stats struct {
	Totals   StatsTotals    `json:"totals"`
	Controls []ControlStats `json:"controls"`
	Shadow   []ControlStats `json:"shadow"`
	Agents   []AgentStats   `json:"agents,omitempty"` // per agent (ordered by name), when the query names none
}

// StatsReport is the answer of GET /observability/stats: the statistics of one agent over a named time
// range (1m, 5m, 15m, 1h, 6h, 24h, 7d, 30d), or without agent_name those of every agent, with Agents
// breaking them down per agent (AgentName is then omitted).
type StatsReport struct {
	AgentName string         `json:"agent_name,omitempty"`
	TimeRange string         `json:"time_range"`
	Totals    StatsTotals    `json:"totals"`
	Controls  []ControlStats `json:"controls"`
	// Shadow is what the shadow controls would have done, per control (Shadow set), never in Totals.
	Shadow []ControlStats `json:"shadow"`
	Agents []AgentStats   `json:"agents,omitempty"`
}

// ControlStatsReport is the answer of GET /observability/stats/controls/{control_id}.
// Without agent_name it covers every agent, with Agents breaking the control's figures down per agent;
// include_timeseries=true adds Timeseries.
type ControlStatsReport struct {
	AgentName   string           `json:"agent_name,omitempty"`
	TimeRange   string           `json:"time_range"`
	ControlID   int64            `json:"control_id"`
	ControlName string           `json:"control_name"`
	Stats       ControlStats     `json:"stats"`
	Agents      []AgentStats     `json:"agents,omitempty"`
	Timeseries  []StatsTimePoint `json:"timeseries,omitempty"`
	// Shadow is the control's shadow evaluations in the range, when it has some.
	Shadow *ControlStats `json:"shadow,omitempty"`
}

// MaxEventDurationMS bounds Event.ExecutionDurationMS: one day in milliseconds. The server refuses posted
// events past it, and statistics leave out stored durations outside [0, MaxEventDurationMS] (and
// confidences outside [0, 1]), so that sums and averages stay finite whatever rows a database holds.
const MaxEventDurationMS = 24 * 60 * 60 * 1000

// MaxEventQueryList bounds each list of an EventQuery (ControlIDs, Actions, CheckStages, StepTypes): every
// value is a parameter of the SQL query, and databases bound those (SQLite at 32,766).
const MaxEventQueryList = 100
