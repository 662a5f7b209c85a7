package pii

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
)

func TestChecksums(t *testing.T) {
	tests := []struct {
		name  string
		check func(string) bool
		in    string
		want  bool
	}{
		{"visa test number", validCard, "4111 1111 1111 1111", true},
		{"mastercard test number", validCard, "5555-5555-5555-4444", true},
		{"amex test number", validCard, "378282246310005", true},
		{"one digit changed", validCard, "4111 1111 1111 1112", false},
		{"does not start like a card", validCard, "1234567812345670", false},
		{"too short", validCard, "4111111111", false},
		{"german IBAN", validIBAN, "DE89 3704 0044 0532 0130 00", true},
		{"british IBAN", validIBAN, "GB82WEST12345698765432", true},
		{"IBAN checksum wrong", validIBAN, "DE88 3704 0044 0532 0130 00", false},
		{"IBAN length wrong for country", validIBAN, "DE89370400440532013", false},
		{"phone", validPhone, "+49 30 1234567", true},
		{"phone too short", validPhone, "+1 555 12", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.check(tt.in); got != tt.want {
				t.Fatalf("check(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestEvaluate(t *testing.T) {
	tests := []struct {
		name   string
		config map[string]any
		text   string
		want   map[string]int // nil: no match
	}{
		{"card in prose", nil, "my card is 4111 1111 1111 1111, thanks", map[string]int{"card": 1}},
		{"order number is not a card", nil, "order 4111 1111 1111 1112 shipped", nil},
		{"iban not also a card", nil, "pay to DE89 3704 0044 0532 0130 00 today", map[string]int{"iban": 1}},
		{"email and phone", nil, "write to ann@example.org or call +44 20 7946 0958", map[string]int{"email": 1, "phone": 1}},
		{"national phone format ignored", nil, "call 030 1234567", nil},
		{"inside JSON text", nil, `{"args":{"to":"GB82WEST12345698765432","cc":"5555555555554444"}}`, map[string]int{"iban": 1, "card": 1}},
		{"kinds filter", map[string]any{"kinds": []any{"card"}}, "ann@example.org", nil},
		{"min_count not reached", map[string]any{"min_count": 2.0}, "ann@example.org", nil},
		{"min_count reached", map[string]any{"min_count": 2.0}, "ann@example.org, bob@example.com", map[string]int{"email": 2}},
		{"nothing", nil, "hello world 12345", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := New(tt.config)
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.Evaluate(context.Background(), &evaluator.Data{Value: tt.text, Text: tt.text})
			if err != nil {
				t.Fatal(err)
			}
			if res.Matched != (tt.want != nil) {
				t.Fatalf("matched = %v (%v), want %v", res.Matched, res.Metadata, tt.want)
			}
			for k, n := range tt.want {
				if res.Metadata[k] != n {
					t.Errorf("%s = %v, want %d (metadata %v)", k, res.Metadata[k], n, res.Metadata)
				}
			}
			for _, secret := range []string{"4111", "example.org", "DE89", "7946"} {
				if strings.Contains(res.Message, secret) {
					t.Errorf("message %q repeats found data", res.Message)
				}
			}
		})
	}
}

func TestNullNeverMatches(t *testing.T) {
	e, _ := New(nil)
	if res, err := e.Evaluate(context.Background(), &evaluator.Data{}); err != nil || res.Matched {
		t.Fatalf("Evaluate(null) = %+v, %v", res, err)
	}
}

func TestRegisteredWithSchema(t *testing.T) {
	if _, ok := evaluator.Default.Lookup(Name); !ok {
		t.Fatalf("%s is not registered", Name)
	}
	tests := []struct {
		config map[string]any
		field  string
	}{
		{map[string]any{"kinds": []any{"passport"}}, "kinds.0"},
		{map[string]any{"min_count": 0}, "min_count"},
		{map[string]any{"threshold": 1}, "threshold"},
	}
	for _, tt := range tests {
		_, err := evaluator.Default.Build(Name, tt.config)
		var ce *evaluator.ConfigError
		if !errors.As(err, &ce) || ce.Problems[0].Field != tt.field {
			t.Errorf("Build(%v) err = %v, want a problem on %s", tt.config, err, tt.field)
		}
	}
}
