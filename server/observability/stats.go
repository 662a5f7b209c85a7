package observability

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
)

// DefaultTimeRange is the time_range of a stats request that names none.
const DefaultTimeRange = "1h"

// TimeRange is one accepted time_range with the width of its time series buckets (at most 73 of them);
// the width divides the span.
type TimeRange struct {
	Name   string
	Span   time.Duration
	Bucket time.Duration
}

// TimeRanges are the time_range values of the contract, shortest first.
var TimeRanges = []TimeRange{
	{"1m", time.Minute, time.Second},             // 60 buckets
	{"5m", 5 * time.Minute, 5 * time.Second},     // 60
	{"15m", 15 * time.Minute, 15 * time.Second},  // 60
	{"1h", time.Hour, time.Minute},               // 60
	{"6h", 6 * time.Hour, 10 * time.Minute},      // 36
	{"24h", 24 * time.Hour, 30 * time.Minute},    // 48
	{"7d", 7 * 24 * time.Hour, 3 * time.Hour},    // 56
	{"30d", 30 * 24 * time.Hour, 12 * time.Hour}, // 60
	// The reference's longer ranges (its clients offer them).
	{"180d", 180 * 24 * time.Hour, 3 * 24 * time.Hour}, // 60
	{"365d", 365 * 24 * time.Hour, 5 * 24 * time.Hour}, // 73: a bucket must divide the span (365 = 5 × 73)
}

// LookupTimeRange finds a time_range by name.
func LookupTimeRange(name string) (TimeRange, bool) {
	for _, tr := range TimeRanges {
		if tr.Name == name {
			return tr, true
		}
	}
	return TimeRange{}, false
}

// Window returns the interval [since, until) the range covers at now: it ends with the bucket holding now
// (buckets are aligned on multiples of their width since the Unix epoch), so the totals and the time series
// cover the same events.
func (tr TimeRange) Window(now time.Time) (since, until time.Time) {
	until = now.UTC().Truncate(tr.Bucket).Add(tr.Bucket)
	return until.Add(-tr.Span), until
}

// StatsResponse is the answer of GET /observability/stats.
type StatsResponse = guard.StatsReport

// ControlStatsResponse is the answer of GET /observability/stats/controls/{control_id}.
type ControlStatsResponse = guard.ControlStatsReport

// statsParams are the validated query parameters of both stats endpoints.
type statsParams struct {
	agent      string
	tr         TimeRange
	timeseries bool
	p95        bool
}

func parseStatsParams(r *http.Request) (statsParams, []guard.Problem) {
	var p statsParams
	var ps []guard.Problem
	qv := r.URL.Query()
	// Without agent_name the statistics cover every agent (the dashboard's overview).
	if raw := qv.Get("agent_name"); raw == "" {
	} else if name, err := guard.NormalizeAgentName(raw); err != nil {
		ps = append(ps, guard.Problem{Field: "agent_name", Code: "invalid", Message: err.Error()})
	} else {
		p.agent = name
	}
	name := qv.Get("time_range")
	if name == "" {
		name = DefaultTimeRange
	}
	tr, ok := LookupTimeRange(name)
	if !ok {
		ps = append(ps, guard.Problem{Field: "time_range", Code: "enum", Message: "must be one of 1m, 5m, 15m, 1h, 6h, 24h, 7d, 30d, 180d, 365d"})
	}
	p.tr = tr
	for _, f := range []struct {
		name string
		dst  *bool
	}{{"include_timeseries", &p.timeseries}, {"include_p95", &p.p95}} {
		if raw := qv.Get(f.name); raw != "" {
			b, err := strconv.ParseBool(raw)
			if err != nil {
				ps = append(ps, guard.Problem{Field: f.name, Code: "type", Message: "must be true or false"})
			}
			*f.dst = b
		}
	}
	return p, ps
}

// Stats answers the statistics of one agent (of every agent, with a breakdown per agent, when the request
// names none) over a time range, computed by the database, with an optional time series (every bucket
// present, empty ones at zero).
func (a *API) Stats(w http.ResponseWriter, r *http.Request) {
	if !a.available(w, r, false) {
		return
	}
	p, ps := parseStatsParams(r)
	if len(ps) > 0 {
		problem.Write(w, r, a.logger(), problem.Validation("the statistics request is not valid", ps...))
		return
	}
	since, until := p.tr.Window(a.now())
	q := guard.StatsQuery{AgentName: p.agent, Since: since, Until: until, P95: p.p95}
	var err error
	if q.Scope, err = a.scoped(r.Context(), p.agent, "agent_name"); err != nil {
		problem.Write(w, r, a.logger(), err)
		return
	}
	if p.timeseries {
		q.Bucket = p.tr.Bucket
	}
	a.catchUp(w, r)
	st, err := a.Store.Stats(r.Context(), q)
	if err != nil {
		problem.Write(w, r, a.logger(), err)
		return
	}
	totals := st.Totals
	if p.timeseries {
		totals.Timeseries = fillSeries(st.Totals.Timeseries, since, until, p.tr.Bucket)
	} else {
		totals.Timeseries = nil
	}
	controls := st.Controls
	if controls == nil {
		controls = []guard.ControlStats{}
	}
	shadow := st.Shadow
	if shadow == nil {
		shadow = []guard.ControlStats{}
	}
	problem.Respond(w, r, a.logger(), http.StatusOK, toStatsOut(StatsResponse{AgentName: p.agent, TimeRange: p.tr.Name, Totals: totals, Controls: controls,
		Shadow: shadow, Agents: st.Agents}))
}

// ControlStats answers the statistics of one control for one agent over a time range, or for every agent
// (with a breakdown per agent) when the request names none, with an optional time series. A control with
// no events in the range gets zero counts (events are records: the control may be deleted or unknown).
func (a *API) ControlStats(w http.ResponseWriter, r *http.Request) {
	if !a.available(w, r, false) {
		return
	}
	p, ps := parseStatsParams(r)
	id, err := strconv.ParseInt(r.PathValue("control_id"), 10, 64)
	if err != nil || id <= 0 { // like every path id of the API (/controls/0 is a 422 too)
		ps = append(ps, guard.Problem{Field: "control_id", Code: "type", Message: "must be a positive integer"})
	}
	if len(ps) > 0 {
		problem.Write(w, r, a.logger(), problem.Validation("the statistics request is not valid", ps...))
		return
	}
	since, until := p.tr.Window(a.now())
	q := guard.StatsQuery{AgentName: p.agent, ControlID: &id, Since: since, Until: until}
	if q.Scope, err = a.scoped(r.Context(), p.agent, "agent_name"); err != nil {
		problem.Write(w, r, a.logger(), err)
		return
	}
	if p.timeseries {
		q.Bucket = p.tr.Bucket
	}
	a.catchUp(w, r)
	st, err := a.Store.Stats(r.Context(), q)
	if err != nil {
		problem.Write(w, r, a.logger(), err)
		return
	}
	cs := guard.ControlStats{ControlID: id}
	for _, c := range st.Controls {
		if c.ControlID == id {
			cs = c
			break
		}
	}
	var sh *guard.ControlStats
	for i := range st.Shadow {
		if st.Shadow[i].ControlID == id {
			sh = &st.Shadow[i]
			if cs.ControlName == "" {
				cs.ControlName = sh.ControlName
			}
			break
		}
	}
	// A well-formed id of nothing is a 404 (docs/service.md): no control of this server, live or deleted,
	// has it, and no event of the window names it.
	if cs.ExecutionCount == 0 && sh == nil && a.ControlKnown != nil {
		if err := a.ControlKnown(r.Context(), id); errors.Is(err, guard.ErrControlNotFound) {
			problem.Write(w, r, a.logger(), problem.New(http.StatusNotFound, problem.CodeControlNotFound,
				"no control has this id and no event of the time range names it"))
			return
		} else if err != nil {
			problem.Write(w, r, a.logger(), err)
			return
		}
	}
	var series []guard.StatsTimePoint
	if p.timeseries {
		series = fillSeries(st.Totals.Timeseries, since, until, p.tr.Bucket)
	}
	problem.Respond(w, r, a.logger(), http.StatusOK, toControlStatsReportOut(ControlStatsResponse{AgentName: p.agent, TimeRange: p.tr.Name,
		ControlID: id, ControlName: cs.ControlName, Stats: cs, Agents: st.Agents, Timeseries: series, Shadow: sh}))
}

// fillSeries returns one point per bucket of [since, until), taking the store's points where there are
// some (matched by the bucket their timestamp falls in) and zeros elsewhere.
func fillSeries(points []guard.StatsTimePoint, since, until time.Time, bucket time.Duration) []guard.StatsTimePoint {
	n := int(until.Sub(since) / bucket)
	out := make([]guard.StatsTimePoint, n)
	for i := range out {
		out[i].Timestamp = since.Add(time.Duration(i) * bucket)
	}
	for _, p := range points {
		ts := p.Timestamp.UTC()
		if ts.Before(since) || !ts.Before(until) {
			continue
		}
		i := int(ts.Sub(since) / bucket)
		out[i].ExecutionCount += p.ExecutionCount
		out[i].MatchCount += p.MatchCount
		out[i].NonMatchCount += p.NonMatchCount
		out[i].ErrorCount += p.ErrorCount
		out[i].ActionCounts.Allow += p.ActionCounts.Allow
		out[i].ActionCounts.Deny += p.ActionCounts.Deny
		out[i].ActionCounts.Steer += p.ActionCounts.Steer
		out[i].ActionCounts.Warn += p.ActionCounts.Warn
		out[i].ActionCounts.Log += p.ActionCounts.Log
	}
	return out
}
