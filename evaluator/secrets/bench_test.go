package secrets

import (
	"context"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
	"github.com/guardrail-control/guard/evaluator/internal/benchcpu"
)

// prose2KB is about 2 KB of ordinary agent output with a few of the rules' keywords ("key", "token",
// "access", "api") in running text, and no credential.
var prose2KB = func() string {
	para := "The deployment finished at 14:02 and the service answers again. Access to the staging API " +
		"is limited to the on-call team; the key rotation runbook says to renew every token after an incident. " +
		"Customers reported slow pages between noon and one, which matches the cache eviction we saw. "
	var b strings.Builder
	for b.Len() < 2048 {
		b.WriteString(para)
	}
	return b.String()[:2048]
}()

func benchEval(b *testing.B, cfg map[string]any, text string) {
	r := evaluator.NewRegistry()
	r.Register(Factory())
	built, err := r.Build(Name, cfg)
	if err != nil {
		b.Fatal(err)
	}
	d := &evaluator.Data{Value: text, Text: text}
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	stop := benchcpu.Start(b)
	for i := 0; i < b.N; i++ {
		if _, err := built.Evaluator.Evaluate(ctx, d); err != nil {
			b.Fatal(err)
		}
	}
	stop()
}

// BenchmarkSecrets2KBProse: all rules on 2 KB of prose without a secret.
func BenchmarkSecrets2KBProse(b *testing.B) { benchEval(b, nil, prose2KB) }

// BenchmarkSecrets2KBWithToken: all rules on 2 KB of prose holding one GitHub token.
func BenchmarkSecrets2KBWithToken(b *testing.B) {
	text := prose2KB[:1000] + " " + fakeGitHubPAT + " " + prose2KB[1000+len(fakeGitHubPAT)+2:]
	benchEval(b, nil, text)
}

// BenchmarkSecrets2KBNoGeneric: the specific rules only (no generic-api-key) on 2 KB of prose.
func BenchmarkSecrets2KBNoGeneric(b *testing.B) {
	benchEval(b, map[string]any{"exclude_rules": []any{"generic-api-key"}}, prose2KB)
}
