package observability

import "github.com/prometheus/client_golang/prometheus"

// Outcomes of a shadow evaluation, the values of the outcome label of shadow_evaluations_total.
const (
	// ShadowComplete: every shadow control was evaluated within the request's deadline.
	ShadowComplete = "complete"
	// ShadowDeadline: the shadow evaluation started but the request's deadline cut at least one of its
	// controls (recorded as evaluator errors naming the deadline).
	ShadowDeadline = "deadline"
	// ShadowSkipped: the request's deadline had passed when the enforced controls were done, so the
	// shadow controls were not evaluated at all (nothing is recorded for them).
	ShadowSkipped = "skipped"
)

// newShadowCounter builds shadow_evaluations_total. Shadow controls share the request's one deadline
// (POST /evaluation answers within EVALUATION_TIMEOUT_MS whatever they cost): this counter says how often
// that budget left them short, so an operator sees a shadow control that never gets its chance.
func newShadowCounter(name func(string) string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: name("shadow_evaluations_total"),
		Help: "Shadow evaluations of POST /evaluation by outcome: complete, deadline (cut by the request's deadline), skipped (no time left).",
	}, []string{"outcome"})
	for _, o := range []string{ShadowComplete, ShadowDeadline, ShadowSkipped} {
		c.WithLabelValues(o)
	}
	return c
}

// ObserveShadow counts one shadow evaluation by its outcome (ShadowComplete, ShadowDeadline,
// ShadowSkipped).
func (m *Metrics) ObserveShadow(outcome string) {
	if m == nil {
		return
	}
	m.shadowEvals.WithLabelValues(outcome).Inc()
}
