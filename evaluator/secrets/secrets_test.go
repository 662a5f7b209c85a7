package secrets

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/guardrail-control/guard/evaluator"
)

// Fake credentials shaped like the real ones (random letters, no real account behind them).
const (
	fakeGitHubPAT = "ghp_R8x2Lq9ZtV4mN7cW1pK3sY6dF0hJ5gB2aQeT"
	fakeAWSKey    = "AKIAZ7Q3LM2XR5TYW4PN"
	fakeSlackBot  = "xoxb-1234567890123-9876543210987-Zk3PqR8sTuV2wXyA1bC4dE5f"
	fakeStripe    = "sk_live_4eC39HqLyjWDarjtT1zdp7dcXk9"
	fakeJWT       = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	fakePEM       = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2FhsHBOsQ0Yd5zq8Rr1ZX8d0nHq7\nU9xk2L8a0vQ5s1wY6cQ3b7PpZ0Jx9lEo4NvKq3yH2tGf8mW5aD1rB6sC7uE0iT4\n-----END RSA PRIVATE KEY-----"
	fakeGeneric   = `db_config = {"api_key": "Zq8vN3xR7tL2mK9pW4sY6bH1"}`
)

func build(t *testing.T, cfg map[string]any) *Evaluator {
	t.Helper()
	r := evaluator.NewRegistry()
	r.Register(Factory())
	b, err := r.Build(Name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b.Evaluator.(*Evaluator)
}

func TestRulesLoad(t *testing.T) {
	if len(builtin.rules) < 30 || len(builtin.groups) < 8 {
		t.Fatalf("%d rules in %d groups", len(builtin.rules), len(builtin.groups))
	}
}

func TestFindsSecrets(t *testing.T) {
	tests := []struct {
		name, text string
		cfg        map[string]any
		rule       string // "" = no match
	}{
		{"github pat", "push with " + fakeGitHubPAT + " please", nil, "github-pat"},
		{"aws key", "aws_access_key_id = " + fakeAWSKey, nil, "aws-access-token"},
		{"aws example key is allowed", "key AKIAIOSFODNN7EXAMPLE", nil, ""},
		{"slack bot token", "token: " + fakeSlackBot, map[string]any{"rule_groups": []any{"chat"}}, "slack-bot-token"},
		{"stripe", "charge with " + fakeStripe + " now", map[string]any{"rule_groups": []any{"payment"}}, "stripe-access-token"},
		{"jwt", "Authorization: Bearer " + fakeJWT, map[string]any{"rule_groups": []any{"jwt"}}, "jwt"},
		{"private key", "here:\n" + fakePEM + "\n", nil, "private-key"},
		{"generic secret with context word", fakeGeneric, map[string]any{"rule_groups": []any{"generic"}}, "generic-api-key"},
		{"generic placeholder is not a secret", `api_key = "${API_KEY}"`, map[string]any{"rule_groups": []any{"generic"}}, ""},
		{"low entropy generic value", `password = "aaaaaaaaaaaaaaaa"`, map[string]any{"rule_groups": []any{"generic"}}, ""},
		{"prose with keywords", "The key to a good password policy is rotation; an API token expires.", nil, ""},
		{"group not selected", fakeGitHubPAT, map[string]any{"rule_groups": []any{"cloud"}}, ""},
		{"rule excluded", fakeGitHubPAT, map[string]any{"exclude_rules": []any{"github-pat"}}, ""},
		{"allow_values", fakeGitHubPAT, map[string]any{"allow_values": []any{fakeGitHubPAT}}, ""},
		{"allow_patterns", fakeGitHubPAT, map[string]any{"allow_patterns": []any{"^ghp_R8x2"}}, ""},
		{"keyword case does not matter", strings.ToUpper("x ") + fakeGitHubPAT, nil, "github-pat"},
		{"token cut in the middle is not a match", "ghp_R8x2Lq9ZtV4", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := build(t, tt.cfg)
			res, err := e.Evaluate(context.Background(), &evaluator.Data{Value: tt.text, Text: tt.text})
			if err != nil {
				t.Fatal(err)
			}
			if res.Matched != (tt.rule != "") {
				t.Fatalf("matched %v (%s), want rule %q", res.Matched, res.Message, tt.rule)
			}
			if tt.rule == "" {
				return
			}
			rules := res.Metadata["rules"].([]any)
			found := false
			for _, r := range rules {
				found = found || r == tt.rule
			}
			if !found {
				t.Fatalf("rules %v, want %s", rules, tt.rule)
			}
			for _, f := range res.Metadata["findings"].([]any) {
				m := f.(map[string]any)
				s, e := m["start"].(int), m["end"].(int)
				if s < 0 || e > len(tt.text) || s >= e {
					t.Fatalf("bad offsets %d..%d", s, e)
				}
			}
		})
	}
}

// TestNeverEchoesTheSecret checks that neither the message nor the metadata carry the secret.
func TestNeverEchoesTheSecret(t *testing.T) {
	e := build(t, nil)
	text := "a " + fakeGitHubPAT + " and " + fakeStripe
	res, _ := e.Evaluate(context.Background(), &evaluator.Data{Value: text, Text: text})
	if !res.Matched {
		t.Fatal("no match")
	}
	dump := res.Message
	for _, f := range res.Metadata["findings"].([]any) {
		for k, v := range f.(map[string]any) {
			dump += k
			if s, ok := v.(string); ok {
				dump += s
			}
		}
	}
	for _, secret := range []string{fakeGitHubPAT, fakeStripe, "R8x2Lq9Z"} {
		if strings.Contains(dump, secret) {
			t.Fatalf("result echoes a secret: %s", dump)
		}
	}
	if got := res.Metadata["finding_count"]; got != 2 {
		t.Fatalf("finding_count %v, want 2", got)
	}
	first := res.Metadata["findings"].([]any)[0].(map[string]any)
	if text[first["start"].(int):first["end"].(int)] != fakeGitHubPAT {
		t.Fatal("offsets do not locate the secret")
	}
}

func TestConfigErrors(t *testing.T) {
	r := evaluator.NewRegistry()
	r.Register(Factory())
	tests := []struct {
		name  string
		cfg   map[string]any
		field string
	}{
		{"unknown group", map[string]any{"rule_groups": []any{"nope"}}, "rule_groups.0"},
		{"unknown rule", map[string]any{"rules": []any{"nope"}}, "rules.0"},
		{"bad allow pattern", map[string]any{"allow_patterns": []any{"("}}, "allow_patterns.0"},
		{"nothing left", map[string]any{"rules": []any{"github-pat"}, "exclude_rules": []any{"github-pat"}}, "rules"},
		{"unknown key", map[string]any{"bogus": true}, "bogus"},
		{"max_findings range", map[string]any{"max_findings": 0}, "max_findings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Build(Name, tt.cfg)
			var ce *evaluator.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("err %v, want a ConfigError", err)
			}
			for _, p := range ce.Problems {
				if p.Field == tt.field {
					if strings.Contains(p.Message, "(") && tt.field == "allow_patterns.0" {
						t.Fatalf("message quotes the pattern: %q", p.Message)
					}
					return
				}
			}
			t.Fatalf("problems %v, want one on %s", ce.Problems, tt.field)
		})
	}
}

func TestRequiredLiterals(t *testing.T) {
	e := build(t, map[string]any{"rule_groups": []any{"vcs"}})
	lits, folds, ok := e.RequiredLiterals()
	if !ok || folds || len(lits) == 0 {
		t.Fatalf("literals %v folds %v ok %v", lits, folds, ok)
	}
	for _, l := range lits {
		if l != strings.ToLower(l) {
			t.Fatalf("literal %q is not lower case", l)
		}
	}
}

func TestNullAndNonString(t *testing.T) {
	e := build(t, nil)
	res, err := e.Evaluate(context.Background(), &evaluator.Data{})
	if err != nil || res.Matched {
		t.Fatalf("null: %v %v", res, err)
	}
	text := `{"token":"` + fakeGitHubPAT + `"}`
	res, _ = e.Evaluate(context.Background(), &evaluator.Data{Value: map[string]any{"token": fakeGitHubPAT}, Text: text})
	if !res.Matched {
		t.Fatal("a secret inside an object was missed")
	}
}

func TestCancelledContext(t *testing.T) {
	e := build(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Evaluate(ctx, &evaluator.Data{Value: fakeGitHubPAT, Text: fakeGitHubPAT}); err == nil {
		t.Fatal("no error on a cancelled context")
	}
}

// TestAssignRulesAreMarked guards the template the "name = value" pre-check depends on.
func TestAssignRulesAreMarked(t *testing.T) {
	for _, id := range []string{"generic-api-key", "discord-api-token", "telegram-bot-api-token"} {
		for _, r := range builtin.rules {
			if r.id == id && !r.guard && !r.assign {
				t.Errorf("%s is not recognised as a name = value rule", id)
			}
		}
	}
}

// TestCrowdedTextStaysBounded: a large text crowded with keywords and assignments is scanned in bounded
// windows and answers (a match, or the context's error) instead of running one long regex.
func TestCrowdedTextStaysBounded(t *testing.T) {
	e := build(t, nil)
	text := strings.Repeat(`key = "Zq8vN3xR7tL2mK9pW4sY6bH1" `, 30000) // about 1 MB
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := e.Evaluate(ctx, &evaluator.Data{Value: text, Text: text})
	if err != nil {
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatal(err)
		}
		return
	}
	if !res.Matched || res.Metadata["finding_count"].(int) > maxTotalFindings {
		t.Fatalf("matched %v, finding_count %v", res.Matched, res.Metadata["finding_count"])
	}
}
