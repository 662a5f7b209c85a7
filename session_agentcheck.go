package guard

import (
	"math"

	"github.com/guardrail-control/guard/evaluator"
)

// Agent-wide counters (agent.count, agent.sum) are updated by every session of an agent at once, on
// every replica: an evaluation reads them from a cache (the Redis store's) or without holding them (the
// in-memory store's), so two evaluations may read the same value and both let their step through. To
// keep a limit of N at N however many steps race, the commit of a step let through carries, for every
// agent-wide counter its controls read, the range of values within which what those controls decided
// stays the same (CounterCheck): the store applies the step's additions only if every such counter,
// with them, is still within its range, in the same atomic operation as the additions (the Redis
// store's commit script, the in-memory store's locks). Otherwise it stores nothing and answers the
// agent's current counters, and the step is evaluated again on them. Steps far from a limit never
// conflict: only a step whose counter crossed one of its controls' bounds since it was read does.

// CounterCheck bounds the value an agent-wide counter may have after a commit (the stored value, its
// window applied, plus the commit's additions to it): Min <= value <= Max (-Inf and +Inf when
// unbounded).
type CounterCheck struct {
	Key      string
	WindowMS int64
	Min, Max float64
}

// Holds reports whether value is within the check's range.
func (c *CounterCheck) Holds(value float64) bool { return value >= c.Min && value <= c.Max }

// counterCut is a value at which a threshold leaf reading a counter changes its answer: after says
// whether the cut is just after value (x <= value | x > value: gt, lte) or just before it (x < value |
// x >= value: gte, lt); eq has both.
type counterCut struct {
	value float64
	after bool
}

// agentCheck is what the plan knows of the leaves reading one agent-wide counter: the cuts of their
// thresholds, or exact when some leaf is not a threshold (any change of the value may change it).
type agentCheck struct {
	cuts  []counterCut
	exact bool
}

// addLeaf records what leaf l, which reads the counter, makes of its values.
func (a *agentCheck) addLeaf(l *cLeaf) {
	th, ok := l.ev.(*evaluator.Threshold)
	if !ok {
		a.exact = true
		return
	}
	for _, b := range th.Bounds() {
		switch b.Op {
		case "gt", "lte":
			a.cuts = append(a.cuts, counterCut{b.Value, true})
		case "gte", "lt":
			a.cuts = append(a.cuts, counterCut{b.Value, false})
		case "eq":
			a.cuts = append(a.cuts, counterCut{b.Value, false}, counterCut{b.Value, true})
		default:
			a.exact = true
		}
	}
}

// rangeOf returns the closed range of values around v within which no cut lies: every leaf reading the
// counter answers for them as for v.
func (a *agentCheck) rangeOf(v float64) (lo, hi float64) {
	if a.exact || math.IsNaN(v) {
		return v, v
	}
	lo, hi = math.Inf(-1), math.Inf(1)
	for _, c := range a.cuts {
		if c.after {
			if v <= c.value {
				hi = min(hi, c.value)
			} else {
				lo = max(lo, math.Nextafter(c.value, math.Inf(1)))
			}
			continue
		}
		if v < c.value {
			hi = min(hi, math.Nextafter(c.value, math.Inf(-1)))
		} else {
			lo = max(lo, c.value)
		}
	}
	return lo, hi
}

// buildAgentChecks fills p.agentChecks, one per p.agentCtrs entry, from the leaves of s that read them
// (pids: the snapshot paths of each entry).
func (p *sessionPlan) buildAgentChecks(s *snapshot, pids [][]int32) {
	if len(p.agentCtrs) == 0 {
		return
	}
	p.agentChecks = make([]agentCheck, len(p.agentCtrs))
	byPath := map[int32]int{}
	for i, list := range pids {
		for _, pid := range list {
			byPath[pid] = i
		}
	}
	var walk func(n *cNode)
	walk = func(n *cNode) {
		if n.kind == nodeLeaf {
			if i, ok := byPath[n.leaf.path]; ok {
				p.agentChecks[i].addLeaf(n.leaf)
			}
			return
		}
		for k := range n.kids {
			walk(&n.kids[k])
		}
	}
	for i := range s.controls {
		walk(&s.controls[i].root)
	}
}

// agentCheckList appends to out the checks of a commit of a step let through: every agent-wide counter
// the plan reads, with the range its value (read, with the step's contribution) may keep.
func (v *sessionView) agentCheckList(out []CounterCheck) []CounterCheck {
	for i, sel := range v.plan.agentCtrs {
		n := v.counterValue(sel)
		lo, hi := v.plan.agentChecks[i].rangeOf(n)
		out = append(out, CounterCheck{Key: v.counterKeyFor(sel), WindowMS: sel.window.Milliseconds(), Min: lo, Max: hi})
	}
	return out
}
