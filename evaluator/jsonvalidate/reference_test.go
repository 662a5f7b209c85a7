package jsonvalidate

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
)

// TestReferenceNames checks the reference implementation's config names with its semantics.
func TestReferenceNames(t *testing.T) {
	tests := []struct {
		name string
		cfg  map[string]any
		data string
		want []string // "field:keyword"; nil = no match
	}{
		{"json_schema", map[string]any{"json_schema": map[string]any{"type": "object", "required": []any{"id"}}}, `{"name":"x"}`, []string{"id:required"}},
		{"json_schema is draft 7", map[string]any{"json_schema": map[string]any{"type": "array", "items": []any{map[string]any{"type": "string"}}}}, `["a", 1]`, nil},
		{"required_fields null is missing", map[string]any{"required_fields": []any{"user.id"}}, `{"user":{"id":null}}`, []string{"user.id:required"}},
		{"allow_null_required", map[string]any{"required_fields": []any{"user.id"}, "allow_null_required": true}, `{"user":{"id":null}}`, nil},
		{"guard required accepts null", map[string]any{"required": []any{"user.id"}}, `{"user":{"id":null}}`, nil},
		{"field_constraints missing field", map[string]any{"field_constraints": map[string]any{"score": map[string]any{"min": 0, "max": 1}}}, `{}`, []string{"score:required"}},
		{"guard constraints missing field is fine", map[string]any{"constraints": map[string]any{"score": map[string]any{"min": 0, "max": 1}}}, `{}`, nil},
		{"field_constraints range", map[string]any{"field_constraints": map[string]any{"score": map[string]any{"min": 0, "max": 1}}}, `{"score": 1.5}`, []string{"score:maximum"}},
		{"field_constraints needs a number", map[string]any{"field_constraints": map[string]any{"score": map[string]any{"min": 0}}}, `{"score": "high"}`, []string{"score:type"}},
		{"enum case-sensitive by default", map[string]any{"field_constraints": map[string]any{"cur": map[string]any{"enum": []any{"EUR"}}}}, `{"cur":"eur"}`, []string{"cur:enum"}},
		{"case_sensitive_enums false", map[string]any{"field_constraints": map[string]any{"cur": map[string]any{"enum": []any{"EUR"}}}, "case_sensitive_enums": false}, `{"cur":"eur"}`, nil},
		{"length on strings", map[string]any{"field_constraints": map[string]any{"code": map[string]any{"max_length": 3}}}, `{"code":"ABCD"}`, []string{"code:maxLength"}},
		{"field_patterns all", map[string]any{"field_patterns": map[string]any{"email": "@example\\.com$", "id": "^[0-9]+$"}}, `{"email":"a@example.com","id":"x1"}`, []string{"id:pattern"}},
		{"field_patterns any", map[string]any{"field_patterns": map[string]any{"email": "@example\\.com$", "id": "^[0-9]+$"}, "pattern_match_logic": "any"}, `{"email":"a@example.com","id":"x1"}`, nil},
		{"field_patterns flags", map[string]any{"field_patterns": map[string]any{"email": map[string]any{"pattern": "@EXAMPLE\\.COM$", "flags": []any{"IGNORECASE"}}}}, `{"email":"a@example.com"}`, nil},
		{"field_patterns on a number", map[string]any{"field_patterns": map[string]any{"n": "^4[0-9]$"}}, `{"n": 42}`, nil},
		{"allow_extra_fields false", map[string]any{"field_types": map[string]any{"a": "string"}, "allow_extra_fields": false}, `{"a":"x","b":{"c":1}}`, []string{"b.c:additionalProperties"}},
		{"allow_extra_fields needs field_types", map[string]any{"required_fields": []any{"a"}, "allow_extra_fields": false}, `{"a":"x","b":1}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mustNew(t, tt.cfg)
			res, err := e.Evaluate(context.Background(), &evaluator.Data{Value: tt.data, Text: tt.data})
			if err != nil {
				t.Fatal(err)
			}
			got := fields(t, res)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("violations %v, want %v (%s)", got, tt.want, res.Message)
			}
		})
	}
}

// TestReferenceNamesOnGoValues checks the reference checks on values given by an in-process caller.
func TestReferenceNamesOnGoValues(t *testing.T) {
	e := mustNew(t, map[string]any{"field_constraints": map[string]any{"n": map[string]any{"max": 10}}})
	res, _ := e.Evaluate(context.Background(), &evaluator.Data{Value: map[string]any{"n": 11}})
	if !res.Matched {
		t.Fatal("an int above max was not caught")
	}
}

func TestAliasConflicts(t *testing.T) {
	for _, cfg := range []map[string]any{
		{"schema": map[string]any{}, "json_schema": map[string]any{}},
		{"required": []any{"a"}, "required_fields": []any{"a"}},
		{"constraints": map[string]any{"a": map[string]any{"min": 1}}, "field_constraints": map[string]any{"a": map[string]any{"min": 1}}},
	} {
		_, err := New(cfg)
		var ce *evaluator.ConfigError
		if !errors.As(err, &ce) || ce.Problems[0].Code != "conflict" {
			t.Fatalf("%v: err %v, want a conflict", cfg, err)
		}
	}
	if _, err := New(map[string]any{"field_patterns": map[string]any{"a": "("}}); err == nil {
		t.Fatal("a bad field pattern was accepted")
	}
}
