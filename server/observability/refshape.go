package observability

import (
	guard "github.com/guardrail-control/guard"
)

// The answers of the query and statistics endpoints carry, beside guard's fields, every field of the
// reference implementation's models (docs/compatibility.md): its typed clients refuse an answer that
// lacks one. Nothing of guard's is renamed or removed.

// eventOut is an event as the query answers it: guard's event, with the reference's applies_to and the
// optional fields present (null) when the event has none, and metadata an object.
type eventOut struct {
	guard.Event
	TraceID             string         `json:"trace_id"`
	SpanID              string         `json:"span_id"`
	AppliesTo           string         `json:"applies_to"`
	ExecutionDurationMS *float64       `json:"execution_duration_ms"`
	EvaluatorName       *string        `json:"evaluator_name"`
	SelectorPath        *string        `json:"selector_path"`
	ErrorMessage        *string        `json:"error_message"`
	Metadata            map[string]any `json:"metadata"`
}

func toEventsOut(events []guard.Event) []eventOut {
	out := make([]eventOut, len(events))
	for i := range events {
		e := &events[i]
		o := eventOut{Event: *e, TraceID: e.TraceID, SpanID: e.SpanID, AppliesTo: AppliesTo(e.StepType),
			ExecutionDurationMS: e.ExecutionDurationMS, EvaluatorName: nullable(e.EvaluatorName),
			SelectorPath: nullable(e.SelectorPath), ErrorMessage: nullable(e.ErrorMessage), Metadata: e.Metadata}
		if o.Metadata == nil {
			o.Metadata = map[string]any{}
		}
		out[i] = o
	}
	return out
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// AppliesTo is the reference's applies_to of a step type: llm_call for llm, tool_call for every other
// type (the reference knows these two; its SDKs send tool_call for every step that is not an LLM call).
func AppliesTo(stepType string) string {
	if stepType == "llm" {
		return "llm_call"
	}
	return "tool_call"
}

// actionCountsOut is guard's action counts with the reference's observe key: the matched events of
// log and observe controls, which guard counts together as log (observe behaves as log).
type actionCountsOut struct {
	guard.ActionCounts
	Observe int64 `json:"observe"`
}

func toActions(a guard.ActionCounts) actionCountsOut {
	return actionCountsOut{ActionCounts: a, Observe: a.Log}
}

// controlStatsOut adds the reference's per-decision counts to a control's statistics.
type controlStatsOut struct {
	guard.ControlStats
	ActionCounts actionCountsOut `json:"action_counts"`
	DenyCount    int64           `json:"deny_count"`
	SteerCount   int64           `json:"steer_count"`
	ObserveCount int64           `json:"observe_count"`
}

func toControlStats(c guard.ControlStats) controlStatsOut {
	return controlStatsOut{ControlStats: c, ActionCounts: toActions(c.ActionCounts),
		DenyCount: c.ActionCounts.Deny, SteerCount: c.ActionCounts.Steer, ObserveCount: c.ActionCounts.Log}
}

func toControlStatsList(list []guard.ControlStats) []controlStatsOut {
	out := make([]controlStatsOut, len(list))
	for i := range list {
		out[i] = toControlStats(list[i])
	}
	return out
}

// pointOut is a time series bucket; the reference's per-bucket averages are null (guard does not keep
// them per bucket).
type pointOut struct {
	guard.StatsTimePoint
	ActionCounts  actionCountsOut `json:"action_counts"`
	AvgConfidence *float64        `json:"avg_confidence"`
	AvgDurationMS *float64        `json:"avg_duration_ms"`
}

// toSeries converts a time series; nil stays nil (the reference's "timeseries": null when not asked for).
func toSeries(points []guard.StatsTimePoint) []pointOut {
	if points == nil {
		return nil
	}
	out := make([]pointOut, len(points))
	for i := range points {
		out[i] = pointOut{StatsTimePoint: points[i], ActionCounts: toActions(points[i].ActionCounts)}
	}
	return out
}

// totalsOut is the totals with the reference's observe count and an explicit timeseries (null when
// not asked for).
type totalsOut struct {
	guard.StatsTotals
	ActionCounts actionCountsOut `json:"action_counts"`
	Timeseries   []pointOut      `json:"timeseries"`
}

type agentStatsOut struct {
	guard.AgentStats
	ActionCounts actionCountsOut `json:"action_counts"`
}

// statsOut is the answer of GET /observability/stats (guard.StatsReport's fields, reference additions).
type statsOut struct {
	AgentName string            `json:"agent_name,omitempty"`
	TimeRange string            `json:"time_range"`
	Totals    totalsOut         `json:"totals"`
	Controls  []controlStatsOut `json:"controls"`
	Shadow    []controlStatsOut `json:"shadow"`
	Agents    []agentStatsOut   `json:"agents,omitempty"`
}

func toStatsOut(r guard.StatsReport) statsOut {
	out := statsOut{AgentName: r.AgentName, TimeRange: r.TimeRange,
		Totals:   totalsOut{StatsTotals: r.Totals, ActionCounts: toActions(r.Totals.ActionCounts), Timeseries: toSeries(r.Totals.Timeseries)},
		Controls: toControlStatsList(r.Controls), Shadow: toControlStatsList(r.Shadow)}
	if r.Agents != nil {
		out.Agents = make([]agentStatsOut, len(r.Agents))
		for i := range r.Agents {
			out.Agents[i] = agentStatsOut{AgentStats: r.Agents[i], ActionCounts: toActions(r.Agents[i].ActionCounts)}
		}
	}
	return out
}

// controlStatsBody is the control's statistics with the reference's StatsTotals fields: its time series
// inside (null when not asked for), as well as at the top level where guard's clients read it.
type controlStatsBody struct {
	controlStatsOut
	Timeseries []pointOut `json:"timeseries"`
}

// controlStatsReportOut is the answer of GET /observability/stats/controls/{control_id}.
type controlStatsReportOut struct {
	AgentName   string           `json:"agent_name,omitempty"`
	TimeRange   string           `json:"time_range"`
	ControlID   int64            `json:"control_id"`
	ControlName string           `json:"control_name"`
	Stats       controlStatsBody `json:"stats"`
	Agents      []agentStatsOut  `json:"agents,omitempty"`
	Timeseries  []pointOut       `json:"timeseries,omitempty"`
	Shadow      *controlStatsOut `json:"shadow,omitempty"`
}

func toControlStatsReportOut(r guard.ControlStatsReport) controlStatsReportOut {
	series := toSeries(r.Timeseries)
	out := controlStatsReportOut{AgentName: r.AgentName, TimeRange: r.TimeRange, ControlID: r.ControlID, ControlName: r.ControlName,
		Stats: controlStatsBody{controlStatsOut: toControlStats(r.Stats), Timeseries: series}, Timeseries: series}
	if r.Agents != nil {
		out.Agents = make([]agentStatsOut, len(r.Agents))
		for i := range r.Agents {
			out.Agents[i] = agentStatsOut{AgentStats: r.Agents[i], ActionCounts: toActions(r.Agents[i].ActionCounts)}
		}
	}
	if r.Shadow != nil {
		sh := toControlStats(*r.Shadow)
		out.Shadow = &sh
	}
	return out
}
