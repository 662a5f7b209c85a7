package guard

import "github.com/guardrail-control/guard/evaluator"

// runSet is one distinct byte set required by leaves of one selector path (evaluator.RunPrefilter).
// limit is the longest run any of those leaves requires: measuring stops once a run that long is found.
type runSet struct {
	set   evaluator.ByteSet
	limit int32
}

// buildRunPrefilter gives every leaf whose evaluator requires a run (evaluator.RunPrefilter) an index
// into the snapshot's distinct (path, byte set) pairs. At evaluation time, a leaf that survives the
// literal prefilter has the longest run of its set measured, once per set and evaluation, in one pass
// over the selected text; a run shorter than the leaf requires answers "no match, confidence 1"
// without running the evaluator.
func buildRunPrefilter(s *snapshot) {
	type key struct {
		path int32
		set  evaluator.ByteSet
	}
	ids := make(map[key]int32)
	for i := range s.controls {
		walkLeaves(&s.controls[i].root, func(l *cLeaf) {
			rp, ok := l.ev.(evaluator.RunPrefilter)
			if !ok {
				return
			}
			set, n, ok := rp.RequiredRun()
			if !ok || n < 1 {
				return
			}
			n = min(n, 1<<30)
			k := key{l.path, set}
			id, ok := ids[k]
			if !ok {
				id = int32(len(s.runSets))
				ids[k] = id
				s.runSets = append(s.runSets, runSet{set: set})
				s.paths[l.path].runs = append(s.paths[l.path].runs, id)
			}
			rs := &s.runSets[id]
			rs.limit = max(rs.limit, int32(n))
			l.runSet, l.runMin = id, int32(n)
		})
	}
}

// runFor returns the longest run (capped at the set's limit) of run set k in text, the text of k's
// path, measuring it on first use in this evaluation.
func (sc *scratch) runFor(s *snapshot, k int32, text string) int32 {
	if v := sc.runLen[k]; v != 0 {
		return v - 1
	}
	rs := &s.runSets[k]
	n := int32(rs.set.LongestRun(text, int(rs.limit)))
	sc.runLen[k] = n + 1
	sc.runUsed = append(sc.runUsed, k)
	return n
}
