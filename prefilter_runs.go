package guard

import "github.com/guardrail-control/guard/evaluator"

// runSet is one distinct byte set required by leaves of one selector path (evaluator.RunPrefilter), as a
// lookup table. need and limit are the shortest and the longest run those leaves require.
type runSet struct {
	in          [256]bool
	need, limit int32
}

// longestRun measures the runs of text that matter to the leaves of rs: when text has a run of at least
// need bytes in the set, it returns the longest run's length (or limit, once a run that long is found);
// otherwise a number below need. It probes one byte in every need: a run at least need long must hold
// a probed byte, so the bytes between two probes are read only around a probe that is in the set.
func (rs *runSet) longestRun(text string) int32 {
	n := int(rs.need)
	best := 0
	// Invariant: every run at least n long that lies after position i-n holds position i or starts
	// after it (text[i-n] is not in the set, or i-n is -1).
	for i := n - 1; i < len(text); {
		if !rs.in[text[i]] {
			i += n
			continue
		}
		lo, hi := i, i+1
		for lo > 0 && rs.in[text[lo-1]] {
			lo--
		}
		for hi < len(text) && rs.in[text[hi]] {
			hi++
		}
		if hi-lo > best {
			best = hi - lo
			if best >= int(rs.limit) {
				return rs.limit
			}
		}
		i = hi + n
	}
	return int32(best)
}

// buildRunPrefilter gives every leaf whose evaluator requires a run (evaluator.RunPrefilter) an index
// into the snapshot's distinct (path, byte set) pairs. At evaluation time, a leaf that survives the
// literal prefilter has the longest run of its set measured, once per set and evaluation, in one
// forward pass over the selected text that skips ahead by the shortest required run; a run shorter
// than the leaf requires answers "no match, confidence 1" without running the evaluator.
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
				rs := runSet{need: int32(n)}
				for b := range rs.in {
					rs.in[b] = set.Contains(byte(b))
				}
				s.runSets = append(s.runSets, rs)
				s.paths[l.path].runs = append(s.paths[l.path].runs, id)
			}
			rs := &s.runSets[id]
			rs.need = min(rs.need, int32(n))
			rs.limit = max(rs.limit, int32(n))
			l.runSet, l.runMin = id, int32(n)
		})
	}
}

// runFor returns the longest run of run set k in text, the text of k's path, as runSet.longestRun
// measures it, on first use in this evaluation.
func (sc *scratch) runFor(s *snapshot, k int32, text string) int32 {
	if v := sc.runLen[k]; v != 0 {
		return v - 1
	}
	n := s.runSets[k].longestRun(text)
	sc.runLen[k] = n + 1
	sc.runUsed = append(sc.runUsed, k)
	return n
}
