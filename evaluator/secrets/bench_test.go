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

// config2KB is about 2 KB of a configuration file: assignments to fields named like keys, tokens and
// passwords, half of them high-entropy values (generic-api-key findings), half placeholders and words.
var config2KB = func() string {
	lines := []string{
		`db_password = "Zq8vN3xR7tL2mK9pW4sY6bH1"`,
		`cache_key_prefix = "orders-cache"`,
		`session_secret: "g7Hk2Lp9Qx4Rt8Vm3Nc6Bz1"`,
		`api_token = "${API_TOKEN}"`,
		`"auth_token": "Xw5Tq8Lm2Rk9Vp4Nz7Hc3Jb6"`,
		`service_key: not-configured-yet`,
		`access_secret = 'Pf3Kd8Wq1Zx6Lm9Rt2Vn5Bh7'`,
		`password_policy = "min-length-12"`,
	}
	var b strings.Builder
	for i := 0; b.Len() < 2048; i++ {
		b.WriteString(lines[i%len(lines)])
		b.WriteByte('\n')
	}
	return b.String()[:2048]
}()

// BenchmarkSecrets2KBConfig: all rules on 2 KB of configuration with generic secrets and stop-word checks.
func BenchmarkSecrets2KBConfig(b *testing.B) { benchEval(b, nil, config2KB) }
