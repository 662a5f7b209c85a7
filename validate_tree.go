package guard

import (
	"math"
	"sync"
	"unicode/utf8"
)

// Validate used to check Go-built control data by encoding it to JSON and decoding it again, so that
// ParseControlData's rules applied to exactly what a client would have sent. That round trip was a third
// of the CPU and a quarter of the allocations of loading controls. dataTree builds the same decoded form
// (map[string]any, []any, string, bool, nil) directly from the Go value, field for field as
// encoding/json writes it (omitempty, the MarshalJSON methods of Scope and SteeringContext, null for nil
// lists and maps). Where the round trip would not give back what dataTree builds, dataTree declines and
// Validate does the round trip:
//
//   - a string of the structure that is not valid UTF-8 (encoding/json replaces the bad bytes);
//   - a free-form value (action and evaluator metadata, evaluator config) holding anything but nil, bool,
//     string, int, int64, finite float64, []string, []any and map[string]any (it may fail to encode, as
//     NaN does, or encode as something else), or nested deeper than MaxJSONDepth (too deep, or a cycle);
//   - evaluator configs that are checked (without SkipEvaluatorConfigs): the evaluator then sees the
//     decoded form (numbers as float64), which only the round trip gives.
//
// The free-form values are put in the tree as they are: the parser only asks whether they are objects
// and whether they are empty, which the round trip does not change for the values accepted above. The
// depth of the tree is measured as jsonTooDeep measures the encoded text. TestValidateTreeMatchesJSON
// checks both paths give the same problems on the corpus and on mutated controls.

// validateTree validates c (Execution defaulted) through dataTree; done is false when dataTree declines.
func validateTree(c *ControlData, cfg validateConfig) (done bool, err error) {
	b := treeBuilders.Get().(*treeBuilder)
	defer b.release()
	tree, ok := b.dataTree(c)
	if !ok {
		return false, nil
	}
	p := parser{cfg: cfg}
	p.data(tree)
	if len(p.problems) > 0 {
		return true, &ValidationError{Problems: p.problems}
	}
	return true, nil
}

// dataTree returns the decoded JSON form of c (with Execution defaulted), or ok false where only the
// round trip is exact (see above). The tree lives until b.release.
func (b *treeBuilder) dataTree(c *ControlData) (tree map[string]any, ok bool) {
	m := b.newMap()
	m["description"] = b.str(c.Description)
	m["enabled"] = c.Enabled
	m["execution"] = b.str(string(c.Execution))
	m["scope"] = b.scope(&c.Scope)
	m["condition"] = b.condition(&c.Condition, 0)
	m["action"] = b.action(&c.Action)
	m["tags"] = b.strList(c.Tags, false)
	if c.Tags != nil {
		b.at(1)
	}
	// Depth: the data object (1), its scope, condition and action objects (2), and below.
	if !b.ok || 1+b.depth > MaxJSONDepth {
		return nil, false
	}
	return m, true
}

// treeBuilder builds the decoded form and records whether it is exact (ok) and how deep it nests below
// the data object (depth). Its maps and lists are reused from one control to the next (the parser keeps
// none of them: it copies what it keeps into the ControlData it builds, which Validate drops).
type treeBuilder struct {
	ok    bool
	depth int
	maps  []map[string]any // maps[:used] are in use
	used  int
	slab  []any // lists are cut from it
}

var treeBuilders = sync.Pool{New: func() any { return &treeBuilder{ok: true} }}

func (b *treeBuilder) newMap() map[string]any {
	if b.used < len(b.maps) {
		b.used++
		return b.maps[b.used-1]
	}
	m := make(map[string]any, 8)
	b.maps = append(b.maps, m)
	b.used++
	return m
}

func (b *treeBuilder) list(n int) []any {
	if cap(b.slab)-len(b.slab) < n {
		b.slab = make([]any, 0, max(64, 2*n))
	}
	at := len(b.slab)
	b.slab = b.slab[:at+n]
	return b.slab[at : at+n : at+n]
}

// release clears the tree (dropping its references to the control) and returns b to the pool.
func (b *treeBuilder) release() {
	for _, m := range b.maps[:b.used] {
		clear(m)
	}
	b.used = 0
	clear(b.slab)
	b.slab = b.slab[:0]
	b.ok, b.depth = true, 0
	treeBuilders.Put(b)
}

// at records that a value at nesting level lvl (1: a direct field of the data object) is an object or
// an array.
func (b *treeBuilder) at(lvl int) {
	b.depth = max(b.depth, lvl)
}

func (b *treeBuilder) str(s string) string {
	if !utf8.ValidString(s) {
		b.ok = false
	}
	return s
}

// strList is a []string as decoded: nil is null (absent when omitEmpty), otherwise a list of strings.
func (b *treeBuilder) strList(l []string, omitEmpty bool) any {
	if l == nil || omitEmpty && len(l) == 0 {
		return nil
	}
	out := b.list(len(l))
	for i, s := range l {
		out[i] = b.str(s)
	}
	return out
}

func (b *treeBuilder) scope(s *Scope) map[string]any {
	b.at(1)
	m := b.newMap()
	if s.StepTypes != nil {
		m["step_types"] = b.strList(s.StepTypes, false)
		b.at(2)
	}
	if s.StepNames != nil {
		m["step_names"] = b.strList(s.StepNames, false)
		b.at(2)
	}
	if s.StepNameRegex != "" {
		m["step_name_regex"] = b.str(s.StepNameRegex)
	}
	if s.Stages != nil {
		l := b.list(len(s.Stages))
		for i, st := range s.Stages {
			l[i] = b.str(string(st))
		}
		m["stages"] = l
		b.at(2)
	}
	return m
}

// condition is node n at nesting level lvl (the condition object itself is at level 1; each and/or
// operand is two levels below its parent: the list, then the object).
func (b *treeBuilder) condition(n *Condition, lvl int) map[string]any {
	lvl++
	b.at(lvl)
	if lvl > MaxJSONDepth {
		b.ok = false
		return nil
	}
	m := b.newMap()
	if n.Selector != nil {
		b.at(lvl + 1)
		sel := b.newMap()
		sel["path"] = b.str(n.Selector.Path)
		if n.Selector.Window != "" {
			b.ok = false // session selectors are validated through the JSON round trip
		}
		m["selector"] = sel
	}
	if e := n.Evaluator; e != nil {
		b.at(lvl + 1)
		ev := b.newMap()
		ev["name"] = b.str(e.Name)
		if e.Config != nil {
			ev["config"] = b.free(e.Config, lvl+2)
		} else {
			ev["config"] = nil
		}
		if len(e.Metadata) > 0 {
			ev["metadata"] = b.free(e.Metadata, lvl+2)
		}
		m["evaluator"] = ev
	}
	if len(n.And) > 0 {
		m["and"] = b.conditions(n.And, lvl)
	}
	if len(n.Or) > 0 {
		m["or"] = b.conditions(n.Or, lvl)
	}
	if n.Not != nil {
		m["not"] = b.condition(n.Not, lvl)
	}
	return m
}

func (b *treeBuilder) conditions(l []Condition, lvl int) []any {
	b.at(lvl + 1)
	out := b.list(len(l))
	for i := range l {
		out[i] = b.condition(&l[i], lvl+1)
	}
	return out
}

func (b *treeBuilder) action(a *Action) map[string]any {
	b.at(1)
	m := b.newMap()
	m["decision"] = b.str(string(a.Decision))
	if sc := a.SteeringContext; sc != nil {
		b.at(2)
		actions := sc.RequiredActions
		if actions == nil {
			actions = []string{} // SteeringContext.MarshalJSON
		}
		b.at(3)
		st := b.newMap()
		st["message"] = b.str(sc.Message)
		st["required_actions"] = b.strList(actions, false)
		m["steering_context"] = st
	}
	if len(a.Metadata) > 0 {
		m["metadata"] = b.free(a.Metadata, 2)
	}
	if a.Redact != nil {
		b.at(2)
		rd := b.newMap()
		if a.Redact.Replacement != "" {
			rd["replacement"] = b.str(a.Redact.Replacement)
		}
		m["redact"] = rd
	}
	if a.Approval != nil {
		m["approval"] = b.approvalTree(a.Approval)
	}
	if a.Session != nil {
		b.ok = false // session effects are validated through the JSON round trip
	}
	return m
}

// free checks a free-form map at nesting level lvl and returns it as it is (see above).
func (b *treeBuilder) free(m map[string]any, lvl int) map[string]any {
	if !b.plain(m, lvl) {
		b.ok = false
	}
	return m
}

// plain reports whether v, at nesting level lvl, encodes and decodes back to a value of the same shape,
// recording the depth of its objects and arrays.
func (b *treeBuilder) plain(v any, lvl int) bool {
	switch x := v.(type) {
	case nil, bool, string, int, int64:
		return true
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0)
	case []string:
		b.at(lvl)
		return lvl <= MaxJSONDepth
	case []any:
		b.at(lvl)
		if lvl > MaxJSONDepth {
			return false
		}
		for _, e := range x {
			if !b.plain(e, lvl+1) {
				return false
			}
		}
		return true
	case map[string]any:
		b.at(lvl)
		if lvl > MaxJSONDepth {
			return false
		}
		for _, e := range x {
			if !b.plain(e, lvl+1) {
				return false
			}
		}
		return true
	}
	return false
}
