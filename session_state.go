package guard

import (
	"encoding/json"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/guardrail-control/guard/evaluator"
)

// Caps of one session's state (docs/control-language.md, "Sessions"): what a session holds is bounded
// whatever its steps send, and never includes step content.
const (
	// MaxSessionIDBytes bounds context.session_id.
	MaxSessionIDBytes = 128
	// MaxSessionSteps is how many step records (name, type, decision, time) a session keeps: the last ones.
	MaxSessionSteps = 32
	// MaxSessionCounters bounds the counters and sums of one session or agent; when a new one would
	// exceed it, the counter updated longest ago is dropped.
	MaxSessionCounters = 64
)

// SessionState is what guard remembers of one session (or, for agent.* selectors, of one agent over
// every session): labels with the step that added each, counters and sums, the last step records. An
// update stores the next Version; a state a store hands out is not modified afterwards (the in-memory
// store writes over its own states only within the session's turn, and hands out copies).
type SessionState struct {
	Version  int64         `json:"v"`
	Seq      int64         `json:"q,omitempty"` // steps recorded at the pre stage so far
	Labels   []LabelOrigin `json:"l,omitempty"`
	Counters []Counter     `json:"c,omitempty"`
	Steps    []StepRecord  `json:"s,omitempty"`
	Touched  int64         `json:"t"` // unix ms of the last update

	// session.labels and session.steps as evaluators read them, built on first use (labelsData,
	// stepsData) so that evaluations read them without allocating; a next state whose labels did not
	// change shares its predecessor's (writeNext). Two pointers, not sync.Once and four fields: an idle
	// session holds 1,000,000 of these.
	labelsDer atomic.Pointer[derivedList]
	stepsDer  atomic.Pointer[derivedList]
}

// derivedList is a list of strings as an evaluator reads it: values and text (nil, "" when empty).
type derivedList struct {
	val  []any
	text string
}

// noList is the derivedList of an empty list.
var noList = &derivedList{}

// LabelOrigin is a label of a session and where it came from.
type LabelOrigin struct {
	Label    string `json:"label"`
	Step     int64  `json:"step"`      // the sequence number of the step that added it (1 is the first step)
	StepName string `json:"step_name"` // its name
	By       string `json:"by"`        // "control <name>", "label_steps of control <name>" or "step schema"
}

// Counter is a count or sum over a fixed window (Start is when the window began, unix ms).
type Counter struct {
	Key   string  `json:"k"`
	Start int64   `json:"b"`
	Value float64 `json:"n"`
}

// StepRecord is one step a session went through: never its content.
type StepRecord struct {
	Seq      int64    `json:"seq"`
	Type     string   `json:"type"`
	Name     string   `json:"name"`
	Decision Decision `json:"decision"`
	At       int64    `json:"at"` // unix ms
}

// labelsData is session.labels of s alone (nil when none), built on first use.
func (s *SessionState) labelsData() evaluator.Data {
	if s == nil {
		return evaluator.Data{}
	}
	d := s.labelsDer.Load()
	if d == nil {
		d = s.deriveLabels()
		s.labelsDer.Store(d) // concurrent first uses build equal lists: either may stay
	}
	if d.val == nil {
		return evaluator.Data{}
	}
	return evaluator.Data{Value: d.val, Text: d.text}
}

// stepsData is session.steps of s (nil when none), built on first use.
func (s *SessionState) stepsData() evaluator.Data {
	if s == nil {
		return evaluator.Data{}
	}
	d := s.stepsDer.Load()
	if d == nil {
		d = s.deriveSteps()
		s.stepsDer.Store(d)
	}
	if d.val == nil {
		return evaluator.Data{}
	}
	return evaluator.Data{Value: d.val, Text: d.text}
}

// deriveLabels builds the labels as a list with its text.
func (s *SessionState) deriveLabels() *derivedList {
	if len(s.Labels) == 0 {
		return noList
	}
	d := &derivedList{val: make([]any, len(s.Labels))}
	names := make([]string, len(s.Labels))
	for i, l := range s.Labels {
		d.val[i], names[i] = l.Label, l.Label
	}
	d.text = listText(names)
	return d
}

// deriveSteps builds the names of the allowed steps as a list with its text.
func (s *SessionState) deriveSteps() *derivedList {
	var steps []string
	for _, r := range s.Steps {
		if !blocks(r.Decision) {
			steps = append(steps, r.Name)
		}
	}
	if len(steps) == 0 {
		return noList
	}
	d := &derivedList{val: make([]any, len(steps))}
	for i, n := range steps {
		d.val[i] = n
	}
	d.text = listText(steps)
	return d
}

// listText is the text form of a list of strings, as textForm writes it.
func listText(items []string) string {
	b, _ := json.Marshal(items)
	return string(b)
}

// blocks reports whether a decision keeps the step from running.
func blocks(d Decision) bool { return d == DecisionDeny || d == DecisionSteer }

// hasLabel reports whether s holds label l.
func (s *SessionState) hasLabel(l string) bool {
	if s == nil {
		return false
	}
	for i := range s.Labels {
		if s.Labels[i].Label == l {
			return true
		}
	}
	return false
}

// counter returns the value of counter key at now (0 when its window has passed or it does not exist).
func (s *SessionState) counter(key string, window, now int64) float64 {
	if s == nil {
		return 0
	}
	for i := range s.Counters {
		c := &s.Counters[i]
		if c.Key == key {
			if window > 0 && now-c.Start >= window {
				return 0
			}
			return c.Value
		}
	}
	return 0
}

// keyOf returns the key of the counter named pre+name that s holds ("" when none): the key of a
// current-name count is built from the step's name, and reusing the stored string saves building it
// on every evaluation.
func (s *SessionState) keyOf(pre, name string) string {
	if s == nil {
		return ""
	}
	for i := range s.Counters {
		k := s.Counters[i].Key
		if len(k) == len(pre)+len(name) && k[len(pre):] == name && k[:len(pre)] == pre {
			return k
		}
	}
	return ""
}

// counterAdd is the contribution of one evaluation to one counter.
type counterAdd struct {
	key    string
	window int64 // ms, 0: none
	add    float64
}

// next returns the state after an evaluation: s (nil for a new session) with labels added, counters
// advanced and, when rec is not nil, the step recorded. It never modifies s.
func (s *SessionState) next(labels []LabelOrigin, adds []CounterAdd, rec *StepRecord, now int64) *SessionState {
	n := &SessionState{Touched: now}
	if s != nil {
		n.Version, n.Seq = s.Version, s.Seq
		n.Labels = append([]LabelOrigin(nil), s.Labels...)
		n.Counters = append([]Counter(nil), s.Counters...)
		n.Steps = append([]StepRecord(nil), s.Steps...)
	}
	n.Version++
	if rec != nil {
		n.Seq = rec.Seq
		n.Steps = append(n.Steps, *rec)
		if len(n.Steps) > MaxSessionSteps {
			n.Steps = append(n.Steps[:0:0], n.Steps[len(n.Steps)-MaxSessionSteps:]...)
		}
	}
	for _, l := range labels {
		if len(n.Labels) >= MaxSessionLabels {
			break
		}
		if !n.hasLabel(l.Label) {
			n.Labels = append(n.Labels, l)
		}
	}
	n.Counters = applyCounters(n.Counters, adds, now)
	return n
}

// applyCounters adds adds to counters (restarting a window that has passed) and keeps at most
// MaxSessionCounters, dropping those whose window started longest ago.
func applyCounters(cs []Counter, adds []CounterAdd, now int64) []Counter {
	for _, a := range adds {
		found := false
		for i := range cs {
			c := &cs[i]
			if c.Key != a.Key {
				continue
			}
			found = true
			if a.WindowMS > 0 && now-c.Start >= a.WindowMS {
				c.Start, c.Value = now, 0
			}
			c.Value += a.Add
			break
		}
		if !found {
			cs = append(cs, Counter{Key: a.Key, Start: now, Value: a.Add})
		}
	}
	if len(cs) > MaxSessionCounters {
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].Start > cs[j].Start })
		cs = cs[:MaxSessionCounters]
	}
	return cs
}

// DecodeSessionState decodes a state stored as JSON (the Redis store, sessionredis).
func DecodeSessionState(b []byte) (*SessionState, error) {
	var s SessionState
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// labelsBy says where labels came from, for LabelOrigin.By.
func labelsBy(kind, control string) string {
	if control == "" {
		return kind
	}
	return kind + " " + strings.TrimSpace(control)
}

// writeNext writes into n the state after s (nil for a new session) with the delta applied, reusing n's
// arrays: the in-memory store keeps two states per session and writes each step's state over the one
// before last, which no evaluation reads any more (session_turns.go), so that a step allocates nothing.
// n must not be s.
func (s *SessionState) writeNext(n *SessionState, labels []LabelOrigin, adds []CounterAdd, rec *StepRecord, now int64) {
	n.Touched = now
	n.Version, n.Seq = 1, 0
	n.Labels, n.Counters, n.Steps = n.Labels[:0], n.Counters[:0], n.Steps[:0]
	if s != nil {
		n.Version, n.Seq = s.Version+1, s.Seq
		n.Labels = append(n.Labels, s.Labels...)
		n.Counters = append(n.Counters, s.Counters...)
		steps := s.Steps
		if rec != nil && len(steps) >= MaxSessionSteps {
			steps = steps[len(steps)-MaxSessionSteps+1:]
		}
		n.Steps = append(n.Steps, steps...)
	}
	if rec != nil {
		n.Seq = rec.Seq
		n.Steps = append(n.Steps, *rec)
	}
	added := false
	for _, l := range labels {
		if len(n.Labels) >= MaxSessionLabels {
			break
		}
		if !n.hasLabel(l.Label) {
			n.Labels = append(n.Labels, l)
			added = true
		}
	}
	// The lists derived from s still hold when labels or steps did not change (nil: not built yet).
	var labelsDer, stepsDer *derivedList
	if s != nil && !added {
		labelsDer = s.labelsDer.Load()
	}
	if s != nil && rec == nil {
		stepsDer = s.stepsDer.Load()
	}
	n.labelsDer.Store(labelsDer)
	n.stepsDer.Store(stepsDer)
	if len(adds) > 0 {
		n.Counters = applyCounters(n.Counters, adds, now)
	}
}

// clone returns a copy of s that shares nothing with it (nil for nil): what the in-memory store hands
// out through its public Load and Commit, since it writes over its states.
func (s *SessionState) clone() *SessionState {
	if s == nil {
		return nil
	}
	c := &SessionState{Version: s.Version, Seq: s.Seq, Touched: s.Touched,
		Labels:   append([]LabelOrigin(nil), s.Labels...),
		Counters: append([]Counter(nil), s.Counters...),
		Steps:    append([]StepRecord(nil), s.Steps...)}
	return c
}
