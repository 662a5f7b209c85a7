package guard

import (
	"maps"
	"sync/atomic"
)

// StepLabels is the labels an agent's step schemas declare, by step name, shared by the engines of the
// agent and replaced as a whole when the steps change (a new registration, an MCP server's new tool
// list), without recompiling the controls. The zero value declares none; nil declares none. It is safe
// for concurrent use.
type StepLabels struct {
	m atomic.Pointer[map[string][]string]
}

// Set replaces the labels: step name -> labels. The map is copied; Set(nil) removes them all.
func (s *StepLabels) Set(labels map[string][]string) {
	if len(labels) == 0 {
		s.m.Store(nil)
		return
	}
	c := maps.Clone(labels)
	s.m.Store(&c)
}

// Of returns the labels of the steps named name (nil when none; the slice must not be modified).
func (s *StepLabels) Of(name string) []string {
	if s == nil {
		return nil
	}
	m := s.m.Load()
	if m == nil {
		return nil
	}
	return (*m)[name]
}

// LabelsOfSteps collects the labels of steps by name (steps of one name but different types share their
// labels), nil when no step declares any.
func LabelsOfSteps(steps []StepSchema) map[string][]string {
	var out map[string][]string
	for _, st := range steps {
		if len(st.Labels) == 0 {
			continue
		}
		if out == nil {
			out = map[string][]string{}
		}
		for _, l := range st.Labels {
			if !containsString(out[st.Name], l) {
				out[st.Name] = append(out[st.Name], l)
			}
		}
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// WithStepLabelSet makes the engine read the labels of the agent's step schemas from sl, which its
// owner may Set at any time (the server and the client share one set among the engines of an agent).
func WithStepLabelSet(sl *StepLabels) Option {
	return func(c *engineConfig) { c.sessions().stepLabels = sl }
}

// SetStepLabels replaces the labels of the engine's step schemas (and of its shadow engine), by step
// name; see WithStepLabels. An engine given a set by WithStepLabelSet changes that set.
func (e *Engine) SetStepLabels(labels map[string][]string) {
	if sh := e.cfg.sess; sh != nil && sh.stepLabels != nil { // nil: a zero Engine, not made by New
		sh.stepLabels.Set(labels)
	}
}
