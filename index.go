package guard

import "math/bits"

func stageSlot(s Stage) int {
	if s == StagePost {
		return 1
	}
	return 0
}

// buildIndex indexes the compiled controls by stage, step type and step name, so that a step pays only
// for the controls whose scope can apply to it.
func buildIndex(s *snapshot) {
	for st := range s.stages {
		s.stages[st].byType = make(map[string]*bucket)
	}
	for i := range s.controls {
		c := &s.controls[i]
		idx := int32(i)
		stages := c.scope.Stages
		if stages == nil {
			stages = []Stage{StagePre, StagePost}
		}
		for _, st := range stages {
			if !st.Valid() {
				continue
			}
			si := &s.stages[stageSlot(st)]
			if c.scope.StepTypes == nil {
				addToBucket(&si.anyType, idx, c.scope.StepNames, c.nameRx != nil)
				continue
			}
			for _, t := range c.scope.StepTypes {
				b := si.byType[t]
				if b == nil {
					b = &bucket{}
					si.byType[t] = b
				}
				addToBucket(b, idx, c.scope.StepNames, c.nameRx != nil)
			}
		}
	}
}

// appendOnce appends idx unless it is already the last element (indexes arrive in ascending order,
// so a repeated stage, type or name would repeat it right away).
func appendOnce(list []int32, idx int32) []int32 {
	if len(list) > 0 && list[len(list)-1] == idx {
		return list
	}
	return append(list, idx)
}

// addToBucket files control idx under its name filters.
func addToBucket(b *bucket, idx int32, names []string, hasRx bool) {
	if len(names) == 0 && !hasRx {
		b.all = appendOnce(b.all, idx)
		return
	}
	if len(names) > 0 {
		if b.byName == nil {
			b.byName = make(map[string][]int32)
		}
		for _, n := range names {
			b.byName[n] = appendOnce(b.byName[n], idx)
		}
	}
	if hasRx {
		b.rx = appendOnce(b.rx, idx)
	}
}

// candidates returns the indexes of the controls that apply to a step of type typ named name at stage,
// in evaluation order. The result aliases snapshot lists or sc.cand and must not be modified.
func (s *snapshot) candidates(stage Stage, typ, name string, sc *scratch) []int32 {
	sc.payload = payloadRoot(stage)
	si := &s.stages[stageSlot(stage)]
	var lists [4][]int32
	n := 0
	var rx [2][]int32
	buckets := [2]*bucket{si.byType[typ], &si.anyType}
	for k, b := range buckets {
		if b == nil {
			continue
		}
		if len(b.all) > 0 {
			lists[n] = b.all
			n++
		}
		if l := b.byName[name]; len(l) > 0 {
			lists[n] = l
			n++
		}
		rx[k] = b.rx
	}
	if len(rx[0]) == 0 && len(rx[1]) == 0 {
		switch n {
		case 0:
			return nil
		case 1:
			return lists[0]
		}
	}
	mark := sc.mark
	for _, l := range lists[:n] {
		for _, idx := range l {
			mark[idx>>6] |= 1 << (uint(idx) & 63)
		}
	}
	for _, l := range rx {
		for _, idx := range l {
			if mark[idx>>6]&(1<<(uint(idx)&63)) == 0 && s.controls[idx].nameRx.MatchString(name) {
				mark[idx>>6] |= 1 << (uint(idx) & 63)
			}
		}
	}
	out := sc.cand[:0]
	for w, word := range mark {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			out = append(out, int32(w<<6+b))
			word &= word - 1
		}
		mark[w] = 0
	}
	sc.cand = out
	return out
}

// applies reports whether any control applies, without building the candidate list.
func (s *snapshot) applies(stage Stage, typ, name string) bool {
	si := &s.stages[stageSlot(stage)]
	for _, b := range [2]*bucket{si.byType[typ], &si.anyType} {
		if b == nil {
			continue
		}
		if len(b.all) > 0 || len(b.byName[name]) > 0 {
			return true
		}
		for _, idx := range b.rx {
			if s.controls[idx].nameRx.MatchString(name) {
				return true
			}
		}
	}
	return false
}
