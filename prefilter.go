package guard

import (
	"github.com/guardrail-control/guard/evaluator"
	"github.com/guardrail-control/guard/internal/ahocorasick"
)

// buildPrefilter builds, for every selector path, one Aho-Corasick automaton over the literals that the
// leaves selecting it require (evaluator.Prefilter). At evaluation time one pass over the selected text
// tells which filtered leaves can possibly match; the others are answered "no match, confidence 1"
// without running.
//
// A leaf is filtered only when its evaluator names a non-empty set of non-empty literals. When the
// evaluator folds case (Unicode), a literal with a non-ASCII byte could match ASCII text through
// folding (the Kelvin sign K matches k), so such a leaf is not filtered; and at evaluation time the
// filter is not trusted for a folding leaf when the text holds any non-ASCII byte.
func buildPrefilter(s *snapshot) {
	type pathLits struct {
		ids      map[string]int32
		patterns []string
	}
	per := make([]pathLits, len(s.paths))
	for i := range s.controls {
		walkLeaves(&s.controls[i].root, func(l *cLeaf) {
			pf, ok := l.ev.(evaluator.Prefilter)
			if !ok {
				return
			}
			lits, folds, ok := pf.RequiredLiterals()
			if !ok || len(lits) == 0 {
				return
			}
			for _, lit := range lits {
				if lit == "" || folds && hasNonASCII(lit) {
					return
				}
			}
			pl := &per[l.path]
			if pl.ids == nil {
				pl.ids = make(map[string]int32)
			}
			l.filtered = true
			l.foldsCase = folds
			l.bits = make([]int32, 0, len(lits))
			for _, lit := range lits {
				key := foldASCII(lit)
				id, ok := pl.ids[key]
				if !ok {
					id = int32(len(pl.patterns))
					pl.ids[key] = id
					pl.patterns = append(pl.patterns, key)
				}
				l.bits = append(l.bits, id) // made absolute below
			}
		})
	}
	words := 0
	for p := range s.paths {
		if len(per[p].patterns) == 0 {
			continue
		}
		s.paths[p].ac = ahocorasick.New(per[p].patterns)
		s.paths[p].patBase = words
		s.paths[p].words = (len(per[p].patterns) + 63) / 64
		words += s.paths[p].words
	}
	s.patWords = words
	for i := range s.controls {
		walkLeaves(&s.controls[i].root, func(l *cLeaf) {
			if l.filtered {
				base := int32(s.paths[l.path].patBase * 64)
				for k := range l.bits {
					l.bits[k] += base
				}
			}
		})
	}
}

// walkLeaves calls f for every leaf of the tree (depth is bounded by validation).
func walkLeaves(n *cNode, f func(*cLeaf)) {
	if n.kind == nodeLeaf {
		if n.leaf != nil {
			f(n.leaf)
		}
		return
	}
	for i := range n.kids {
		walkLeaves(&n.kids[i], f)
	}
}

func hasNonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	return false
}

func foldASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
