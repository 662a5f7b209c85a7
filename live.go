package guard

import (
	"cmp"
	"math/bits"
	"slices"
)

// The live index: which controls a step can make effective, found without visiting the others.
//
// The prefilters (buildPrefilter, buildRunPrefilter) answer a leaf "no match, confidence 1" without
// running its evaluator when none of its required literals occurs in the selected text, or when the text
// has no run as long as it requires. Check and Evaluate still walked every candidate control to ask each
// leaf; at 10,000 controls that walk was nearly all of Check's time. The live index turns the question
// around: from the literals the automaton found and the runs of the text, it marks the controls that can
// be anything but "no match, confidence 1, no error", and only those are visited.
//
// A control's gates are leaves that every path to a match or an error of its condition passes: the leaf
// itself, every operand of an or (all of them are evaluated when none matches), the first operand of an
// and (the and stops there when it does not match; a later operand is not a gate, since an error of an
// earlier one would come first). A not has none. A leaf is a gate when it is prefiltered (literals, a run,
// or both). When every gate of a control is ruled out by the prefilters, each gated leaf answers "no
// match, confidence 1" without running, so the control's outcome is exactly nodeOut{conf: 1} with no
// evaluator run (Duration 0) whatever the context: the prefilters come before the deadline check.
// Controls without gates are always visited.
//
// The prefilters only rule a leaf out when its selected data is a string (and, for a case-folding leaf,
// an ASCII one); otherwise, and when the data cannot be selected (an error), every control gated on that
// path is visited.
//
// A gate is filed under each of its literals with its run requirement, as a group: controls that share a
// literal and a run requirement are marked together after one test. Visiting a control the index marks
// is always correct (it is evaluated as before); the index only saves visits, and tests check that the
// decisions and results are those of the plain walk (live_test.go).

// defaultLiveIndexMin is the number of candidate controls from which Check and Evaluate consult the live
// index: below it, walking the candidates costs less than marking.
const defaultLiveIndexMin = 64

// liveIndex is built once per snapshot; every list of control indexes is ascending.
type liveIndex struct {
	always    []int32 // controls without gates
	paths     []livePath
	bitStart  []int32 // CSR over literal bits (snapshot prefilter bitset): bit b's groups are bitGroup[bitStart[b]:bitStart[b+1]]
	bitGroup  []int32
	groups    []liveGroup
	groupCtl  []int32 // the controls of all groups, group by group
	denySteer int32   // controls of class deny or steer (they come first)
}

// livePath is a selector path that gates controls.
type livePath struct {
	path    int32
	all     []int32 // controls with a gate on this path: visited when its data is not a string or fails
	fold    []int32 // controls with a case-folding literal gate here: visited when its text is not ASCII
	runOnly []int32 // groups of gates here that require a run and no literal
	lits    bool    // some gate here requires literals
}

// liveGroup is the controls that share one requirement: a literal (implied by where the group is filed)
// and a run of runMin bytes of run set runSet (runMin 0: no run required).
type liveGroup struct {
	runSet, runMin int32
	ctlFrom, ctlTo int32 // in groupCtl
}

// gates appends the gates of n to out and reports whether n has gates (see above).
func gates(n *cNode, out []*cLeaf) ([]*cLeaf, bool) {
	switch n.kind {
	case nodeLeaf:
		if n.leaf == nil || !n.leaf.filtered && n.leaf.runMin == 0 {
			return out, false
		}
		return append(out, n.leaf), true
	case nodeOr:
		for i := range n.kids {
			var ok bool
			if out, ok = gates(&n.kids[i], out); !ok {
				return out, false
			}
		}
		return out, len(n.kids) > 0
	case nodeAnd:
		if len(n.kids) == 0 {
			return out, false
		}
		return gates(&n.kids[0], out)
	}
	return out, false
}

// buildLiveIndex builds s.live; the prefilters must have been built. The groups are found by sorting the
// (requirement, control) pairs, which costs less than hashing them at 10,000 controls.
func buildLiveIndex(s *snapshot) {
	li := &s.live
	type entry struct {
		bit, runSet, runMin int32 // bit -1: a run-only gate
		path, ci            int32
	}
	var entries []entry
	pathAt := map[int32]int{}
	pathFor := func(p int32) *livePath {
		k, ok := pathAt[p]
		if !ok {
			k = len(li.paths)
			pathAt[p] = k
			li.paths = append(li.paths, livePath{path: p})
		}
		return &li.paths[k]
	}
	var gs []*cLeaf
	for i := range s.controls {
		ci := int32(i)
		if s.controls[i].class != classOther {
			li.denySteer = ci + 1
		}
		var ok bool
		gs, ok = gates(&s.controls[i].root, gs[:0])
		if !ok {
			li.always = append(li.always, ci)
			continue
		}
		for _, l := range gs {
			lp := pathFor(l.path)
			lp.all = appendOnce(lp.all, ci)
			runSet, runMin := l.runSet, l.runMin
			if runMin == 0 {
				runSet = -1
			}
			if !l.filtered {
				entries = append(entries, entry{-1, runSet, runMin, l.path, ci})
				continue
			}
			lp.lits = true
			if l.foldsCase {
				lp.fold = appendOnce(lp.fold, ci)
			}
			for _, b := range l.bits {
				entries = append(entries, entry{b, runSet, runMin, l.path, ci})
			}
		}
	}
	slices.SortFunc(entries, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.bit, b.bit), cmp.Compare(a.runSet, b.runSet), cmp.Compare(a.runMin, b.runMin), cmp.Compare(a.ci, b.ci))
	})
	nbits := s.patWords * 64
	li.bitStart = make([]int32, nbits+1)
	li.groupCtl = make([]int32, 0, len(entries))
	for k := 0; k < len(entries); {
		e := entries[k]
		g := int32(len(li.groups))
		lg := liveGroup{runSet: e.runSet, runMin: e.runMin, ctlFrom: int32(len(li.groupCtl))}
		for ; k < len(entries) && entries[k].bit == e.bit && entries[k].runSet == e.runSet && entries[k].runMin == e.runMin; k++ {
			if ci := entries[k].ci; len(li.groupCtl) == int(lg.ctlFrom) || li.groupCtl[len(li.groupCtl)-1] != ci {
				li.groupCtl = append(li.groupCtl, ci) // not twice in a group (an or of two equal gates)
			}
		}
		lg.ctlTo = int32(len(li.groupCtl))
		li.groups = append(li.groups, lg)
		if e.bit < 0 {
			lp := pathFor(e.path)
			lp.runOnly = append(lp.runOnly, g)
		} else {
			li.bitStart[e.bit+1]++ // counted here, summed below
			li.bitGroup = append(li.bitGroup, g)
		}
	}
	for b := 0; b < nbits; b++ {
		li.bitStart[b+1] += li.bitStart[b]
	}
}

// markLive sets in sc.live the controls the step can make effective (see above), every control when it
// cannot tell. It selects the data of every gating path, scans it and measures its runs, as the leaves
// would on first use.
func (r *run) markLive() {
	s, sc := r.snap, r.sc
	li := &s.live
	mark := sc.live
	set := func(list []int32) {
		for _, ci := range list {
			mark[ci>>6] |= 1 << (uint(ci) & 63)
		}
	}
	set(li.always)
	for k := range li.paths {
		lp := &li.paths[k]
		d, err := sc.dataFor(s, r.step, lp.path)
		if err != nil {
			set(lp.all)
			continue
		}
		if _, ok := d.Value.(string); !ok {
			set(lp.all)
			continue
		}
		text := d.Text
		testGroup := func(g int32) {
			lg := &li.groups[g]
			if lg.runMin == 0 || sc.runFor(s, lg.runSet, text) >= lg.runMin {
				set(li.groupCtl[lg.ctlFrom:lg.ctlTo])
			}
		}
		if lp.lits {
			if sc.scanFor(s, lp.path, text) == scanNonASCII {
				set(lp.fold)
			}
			cp := &s.paths[lp.path]
			base := cp.patBase * 64
			for w, word := range sc.pat[cp.patBase : cp.patBase+cp.words] {
				for word != 0 {
					b := base + w*64 + bits.TrailingZeros64(word)
					word &= word - 1
					for _, g := range li.bitGroup[li.bitStart[b]:li.bitStart[b+1]] {
						testGroup(g)
					}
				}
			}
		}
		for _, g := range lp.runOnly {
			testGroup(g)
		}
	}
}

// useLive reports whether an evaluation of cands consults the live index.
func (s *snapshot) useLive(cands []int32) bool {
	return s.liveMin > 0 && len(cands) >= s.liveMin
}

// isLive reports whether markLive marked control ci.
func (sc *scratch) isLive(ci int32) bool { return sc.live[ci>>6]&(1<<(uint(ci)&63)) != 0 }

// liveDenySteer returns, in evaluation order, the deny and steer controls that markLive marked and that
// apply to the step (the candidates of Check that can change its decision), and clears the marks. The
// result aliases sc.liveList.
func (r *run) liveDenySteer(stage Stage) []int32 {
	s, sc := r.snap, r.sc
	limit := s.live.denySteer
	out := sc.liveList[:0]
	for w, word := range sc.live {
		if int32(w*64) < limit {
			for word != 0 {
				ci := int32(w*64 + bits.TrailingZeros64(word))
				word &= word - 1
				if ci >= limit {
					break
				}
				if s.controls[ci].appliesTo(stage, r.step.Type, r.step.Name) {
					out = append(out, ci)
				}
			}
		}
		sc.live[w] = 0
	}
	sc.liveList = out
	return out
}

// appliesTo reports whether the control's scope selects a step of type typ named name at stage: the rule
// by which buildIndex files it and candidates finds it.
func (c *cControl) appliesTo(stage Stage, typ, name string) bool {
	if st := c.scope.Stages; st != nil && !containsStage(st, stage) {
		return false
	}
	if c.scope.StepTypes != nil && !contains(c.scope.StepTypes, typ) {
		return false
	}
	if len(c.scope.StepNames) == 0 && c.nameRx == nil {
		return true
	}
	return contains(c.scope.StepNames, name) || c.nameRx != nil && c.nameRx.MatchString(name)
}

func containsStage(list []Stage, s Stage) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
