package ahocorasick

// Hit is one occurrence of a pattern: pattern Pattern ends just before byte End of the text.
type Hit struct {
	Pattern int32
	End     int32
}

// Hits appends to dst every occurrence in text of a pattern whose bit is set in want (want[i/64] bit
// i%64; nil wants every pattern), in order of their end, and returns it. Unlike Scan, which reports each
// pattern once, Hits reports each occurrence: callers that need to know where the patterns occur (which
// sentence holds which words) use it. text must be shorter than 2 GiB.
func (a *Automaton) Hits(text string, want []uint64, dst []Hit) []Hit {
	if a.npat == 0 {
		return dst
	}
	dense, classes := a.dense, &a.classes
	x := a.denseRow[0]
	for i := 0; i < len(text); i++ {
		c := classes[text[i]]
		var s int32
		if x >= 0 {
			v := dense[int(x)+int(c)]
			if v >= 0 {
				x = v
				continue
			}
			s = ^v
		} else {
			s = a.sparseNext(^x, c)
		}
		for r := a.report[s]; r >= 0; r = a.dictNext[r] {
			for _, p := range a.outPat[a.outLo[r]:a.outLo[r+1]] {
				if want == nil || want[p>>6]&(1<<(uint(p)&63)) != 0 {
					dst = append(dst, Hit{Pattern: p, End: int32(i + 1)})
				}
			}
		}
		if r := a.denseRow[s]; r >= 0 {
			x = r
		} else {
			x = ^s
		}
	}
	return dst
}
