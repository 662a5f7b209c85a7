package observability

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	guard "github.com/guardrail-control/guard"
)

// Per-agent and per-control metrics (docs/operations.md "Metrics"): <prefix>_agent_evaluations_total{agent,
// decision} and <prefix>_control_results_total{control_id, result} (result: match or error; a control that
// does not match is not counted, it is the common case and says nothing to alert on). Their labels are
// bounded so that a fleet of many agents or controls cannot grow the scrape without limit: the first
// MaxAgentLabels agent names and MaxControlLabels control ids seen get a series of their own, the others
// are counted together under the label value OtherLabel. The bound is per process, since its start.

// Default bounds of the per-agent and per-control labels.
const (
	DefaultMaxAgentLabels   = 100
	DefaultMaxControlLabels = 500
	// OtherLabel is the label value of the agents or controls past the bound.
	OtherLabel = "_other"
)

// boundedVec is a counter vector whose first label takes at most max distinct values (then OtherLabel),
// with the counters it handed out cached so that the evaluation path neither hashes labels nor allocates.
type boundedVec[K comparable] struct {
	vec   *prometheus.CounterVec
	label func(K) string
	max   int

	mu    sync.RWMutex
	seen  map[K]bool // first-label keys with their own series
	cache map[boundedKey[K]]prometheus.Counter
}

// boundedKey is a cache key of a boundedVec: typed, so that looking it up allocates nothing.
type boundedKey[K comparable] struct {
	first  K
	second string
}

func newBoundedVec[K comparable](vec *prometheus.CounterVec, max int, label func(K) string) *boundedVec[K] {
	return &boundedVec[K]{vec: vec, label: label, max: max, seen: map[K]bool{}, cache: map[boundedKey[K]]prometheus.Counter{}}
}

// counter returns the counter of (k, second), registering k's series while there is room.
func (b *boundedVec[K]) counter(k K, second string) prometheus.Counter {
	key := boundedKey[K]{k, second}
	b.mu.RLock()
	c, ok := b.cache[key]
	b.mu.RUnlock()
	if ok {
		return c
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if c, ok := b.cache[key]; ok {
		return c
	}
	first := OtherLabel
	if b.seen[k] || len(b.seen) < b.max {
		b.seen[k] = true
		first = b.label(k)
	}
	c = b.vec.WithLabelValues(first, second)
	if first != OtherLabel { // past the bound nothing is cached: the cache stays bounded too
		b.cache[key] = c
	}
	return c
}

// SetLabelBounds sets how many agents and controls get series of their own in the per-agent and
// per-control metrics (defaults DefaultMaxAgentLabels, DefaultMaxControlLabels); call it before serving.
// Zero or less keeps the default.
func (m *Metrics) SetLabelBounds(agents, controls int) {
	if m == nil {
		return
	}
	if agents > 0 {
		m.byAgent.max = agents
	}
	if controls > 0 {
		m.byControl.max = controls
	}
}

func newLabelledVecs(name func(string) string) (*boundedVec[string], *boundedVec[int64]) {
	agents := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: name("agent_evaluations_total"),
		Help: "Evaluations (POST /evaluation) by agent and final decision; agents past the label bound are counted as agent=\"_other\".",
	}, []string{"agent", "decision"})
	controls := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: name("control_results_total"),
		Help: "Controls that matched or failed, by control id and result (match, error); controls past the label bound are counted as control_id=\"_other\".",
	}, []string{"control_id", "result"})
	return newBoundedVec(agents, DefaultMaxAgentLabels, func(s string) string { return s }),
		newBoundedVec(controls, DefaultMaxControlLabels, func(id int64) string { return strconv.FormatInt(id, 10) })
}

// ObserveAgentEvaluation counts one evaluation of agent with its final decision.
func (m *Metrics) ObserveAgentEvaluation(agent string, decision guard.Decision) {
	if m == nil {
		return
	}
	m.byAgent.counter(agent, decisionLabel(decision)).Inc()
}

// observeControls counts the matched and failed controls of res by control.
func (m *Metrics) observeControls(res *guard.Result) {
	for i := range res.Matches {
		m.byControl.counter(res.Matches[i].ControlID, "match").Inc()
	}
	for i := range res.Errors {
		m.byControl.counter(res.Errors[i].ControlID, "error").Inc()
	}
}
