package llmproxy

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the proxy's Prometheus collectors. A nil *Metrics counts nothing.
type Metrics struct {
	calls   *prometheus.CounterVec
	steps   *prometheus.CounterVec
	unavail *prometheus.CounterVec
}

// NewMetrics registers the proxy's collectors on reg, every name prefixed by prefix and an underscore:
// PREFIX_proxy_calls_total{api,outcome}, PREFIX_proxy_steps_total{api,step_kind,decision} and
// PREFIX_proxy_guard_unavailable_total{mode}.
func NewMetrics(reg prometheus.Registerer, prefix string) (*Metrics, error) {
	m := &Metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: prefix + "_proxy_calls_total",
			Help: "LLM API calls through the proxy, by API and outcome (forwarded, refused, upstream_error, bad_request, guard_error)."},
			[]string{"api", "outcome"}),
		steps: prometheus.NewCounterVec(prometheus.CounterOpts{Name: prefix + "_proxy_steps_total",
			Help: "Steps the proxy evaluated, by API, step kind (llm_pre, tool_post, llm_post, tool_pre, llm_window) and decision."},
			[]string{"api", "step_kind", "decision"}),
		unavail: prometheus.NewCounterVec(prometheus.CounterOpts{Name: prefix + "_proxy_guard_unavailable_total",
			Help: "Steps the guard server could not evaluate, by what the proxy did (fail_open, fail_closed)."},
			[]string{"mode"}),
	}
	for _, c := range []prometheus.Collector{m.calls, m.steps, m.unavail} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *Metrics) call(api, outcome string) {
	if m != nil {
		m.calls.WithLabelValues(api, outcome).Inc()
	}
}

func (m *Metrics) step(api, kind, decision string) {
	if m != nil {
		m.steps.WithLabelValues(api, kind, decision).Inc()
	}
}

func (m *Metrics) unavailable(open bool) {
	if m == nil {
		return
	}
	mode := "fail_closed"
	if open {
		mode = "fail_open"
	}
	m.unavail.WithLabelValues(mode).Inc()
}
