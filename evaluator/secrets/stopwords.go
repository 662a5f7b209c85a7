package secrets

import (
	"strings"

	"github.com/guardrail-control/guard/internal/ahocorasick"
)

// stopSet is a list of stop words (lower case): a secret containing one, ASCII case-insensitively, is not
// reported. gitleaks' generic-api-key has some 1,450 of them; a list that long is one Aho-Corasick pass
// over the secret instead of one search per word.
type stopSet struct {
	words []string
	ac    *ahocorasick.Automaton
}

// acMinWords is the list length from which an automaton beats searching word by word.
const acMinWords = 32

func newStopSet(words []string) stopSet {
	s := stopSet{words: lower(words)}
	if len(s.words) >= acMinWords {
		s.ac = ahocorasick.New(s.words)
	}
	return s
}

// in reports whether secret contains one of the words.
func (s *stopSet) in(secret string) bool {
	if len(s.words) == 0 {
		return false
	}
	if s.ac != nil {
		var buf [32]uint64
		var found []uint64
		if n := (s.ac.Len() + 63) / 64; n <= len(buf) {
			found = buf[:n]
		} else {
			found = make([]uint64, n)
		}
		s.ac.Scan(secret, found)
		for _, w := range found {
			if w != 0 {
				return true
			}
		}
		return false
	}
	ls := strings.ToLower(secret)
	for _, w := range s.words {
		if strings.Contains(ls, w) {
			return true
		}
	}
	return false
}
