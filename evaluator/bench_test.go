package evaluator

import (
	"context"
	"testing"
)

// benchInput is a 200-character English text with digits, hyphens and punctuation that none of the
// benchmark patterns or lists match.
const benchInput = "Hello! I placed order #A-48213-77 on March 3rd, and it still hasn't arrived. " +
	"Could you check the shipping status, update the address to 42 Elm Street, and tell me the new ETA? Thanks"

func benchEval(b *testing.B, name string, config map[string]any, input string, want bool) {
	b.Helper()
	built, err := Default.Build(name, config)
	if err != nil {
		b.Fatal(err)
	}
	ev := built.Evaluator
	d := &Data{Value: input, Text: input}
	ctx := context.Background()
	if res, err := ev.Evaluate(ctx, d); err != nil || res.Matched != want {
		b.Fatalf("matched %v err %v, want %v", res.Matched, err, want)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_, _ = ev.Evaluate(ctx, d)
	}
}

func BenchmarkRegexNoMatch(b *testing.B) {
	b.Run("engine=re2", func(b *testing.B) {
		benchEval(b, "regex", map[string]any{"pattern": `\b\d{3}-\d{2}-\d{4}\b`}, benchInput, false)
	})
	b.Run("engine=re2/ignorecase", func(b *testing.B) {
		benchEval(b, "regex", map[string]any{"pattern": `ignore (all )?previous instructions`, "flags": []any{"I"}}, benchInput, false)
	})
	b.Run("engine=regexp2", func(b *testing.B) {
		benchEval(b, "regex", map[string]any{"pattern": `\b(?<!order )\d{3}-\d{2}-\d{4}\b`}, benchInput, false)
	})
}

func BenchmarkRegexMatch(b *testing.B) {
	b.Run("engine=re2", func(b *testing.B) {
		benchEval(b, "regex", map[string]any{"pattern": `\b\d{2}\s+Elm\b`}, benchInput, true)
	})
	b.Run("engine=regexp2", func(b *testing.B) {
		benchEval(b, "regex", map[string]any{"pattern": `\d{2}(?=\s+Elm)`}, benchInput, true)
	})
}

var benchTerms = []any{"password", "credit card", "social security", "wire transfer", "api key"}

func BenchmarkListExact(b *testing.B) {
	b.Run("nomatch", func(b *testing.B) {
		benchEval(b, "list", map[string]any{"values": benchTerms}, benchInput, false)
	})
	b.Run("match", func(b *testing.B) {
		benchEval(b, "list", map[string]any{"values": append([]any{benchInput}, benchTerms...)}, benchInput, true)
	})
	b.Run("nomatch/input=short", func(b *testing.B) {
		benchEval(b, "list", map[string]any{"values": benchTerms}, "Where is my order?", false)
	})
}

func BenchmarkListContains(b *testing.B) {
	b.Run("nomatch", func(b *testing.B) {
		benchEval(b, "list", map[string]any{"values": benchTerms, "match_mode": "contains"}, benchInput, false)
	})
	b.Run("match", func(b *testing.B) {
		benchEval(b, "list", map[string]any{"values": append([]any{"shipping status"}, benchTerms...), "match_mode": "contains"}, benchInput, true)
	})
	b.Run("nomatch/values=1000", func(b *testing.B) {
		vals := make([]any, 1000)
		for i := range vals {
			vals[i] = benchWord(i)
		}
		benchEval(b, "list", map[string]any{"values": vals, "match_mode": "contains"}, benchInput, false)
	})
}

// benchWord is a distinct lowercase word per i that never occurs in benchInput.
func benchWord(i int) string {
	w := []byte("zq")
	for ; i > 0; i /= 26 {
		w = append(w, byte('a'+i%26))
	}
	return string(w)
}
