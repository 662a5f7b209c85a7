package guard

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
)

// TestLongestRunSkipping compares runSet.longestRun, which probes one byte in every need, with a plain
// scan of every byte.
func TestLongestRunSkipping(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	alphabets := []string{"0123456789", "0123456789- ", "ab"}
	parts := []string{"1", "23", "4567", "-", " ", "a", "bc", "é", "\xff", "x"}
	for i := 0; i < 20000; i++ {
		var set evaluator.ByteSet
		for b := 0x80; b < 0x100; b++ {
			set.Add(byte(b))
		}
		for _, c := range []byte(alphabets[r.IntN(len(alphabets))]) {
			set.Add(c)
		}
		rs := runSet{need: int32(1 + r.IntN(8))}
		rs.limit = rs.need + int32(r.IntN(6))
		for b := range rs.in {
			rs.in[b] = set.Contains(byte(b))
		}
		var sb strings.Builder
		for n := r.IntN(40); n > 0; n-- {
			sb.WriteString(parts[r.IntN(len(parts))])
		}
		text := sb.String()
		want := int32(set.LongestRun(text, 0))
		got := rs.longestRun(text)
		switch {
		case want >= rs.limit && got != rs.limit,
			want >= rs.need && want < rs.limit && got != want,
			want < rs.need && got >= rs.need:
			t.Fatalf("text %q need %d limit %d: got %d, longest run %d", text, rs.need, rs.limit, got, want)
		}
	}
}
