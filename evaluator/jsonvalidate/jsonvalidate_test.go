package jsonvalidate

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
)

const secret = "SECRET-VALUE-42"

func mustNew(t testing.TB, config map[string]any) *Evaluator {
	t.Helper()
	e, err := New(config)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

// fields returns "field:keyword" for each violation in r's metadata.
func fields(t *testing.T, r evaluator.Result) []string {
	t.Helper()
	if !r.Matched {
		return nil
	}
	vs, _ := r.Metadata["violations"].([]any)
	var out []string
	for _, v := range vs {
		m := v.(map[string]any)
		out = append(out, m["field"].(string)+":"+m["keyword"].(string))
	}
	if r.Metadata["invalid_json"] == true {
		out = append(out, "invalid_json")
	}
	return out
}

var userSchema = map[string]any{
	"type":     "object",
	"required": []any{"name"},
	"properties": map[string]any{
		"name": map[string]any{"type": "string", "minLength": 1},
		"age":  map[string]any{"type": "integer", "minimum": 0},
		"role": map[string]any{"enum": []any{"user", "admin"}},
	},
	"additionalProperties": false,
}

type evalCase struct {
	name string
	data any
	want []string // violations as field:keyword; nil means no match
}

func runCases(t *testing.T, config map[string]any, cases []evalCase) {
	t.Helper()
	e := mustNew(t, config)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := &evaluator.Data{Value: tc.data}
			res, err := e.Evaluate(context.Background(), d)
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			got := fields(t, res)
			if !slices.Equal(got, tc.want) || res.Matched != (tc.want != nil) {
				t.Fatalf("violations = %v (matched %v), want %v", got, res.Matched, tc.want)
			}
			if strings.Contains(res.Message, secret) {
				t.Fatalf("message %q echoes a value", res.Message)
			}
			if res.Matched && res.Message == "" {
				t.Fatal("a match without a message")
			}
		})
	}
}

func TestSchema(t *testing.T) {
	runCases(t, map[string]any{"schema": userSchema}, []evalCase{
		{"valid object", map[string]any{"name": "ann", "age": 3.0}, nil},
		{"valid JSON text", `{"name": "ann", "role": "admin"}`, nil},
		{"null data never matches", nil, nil},
		{"missing required", map[string]any{"age": 3.0}, []string{"name:required"}},
		{"wrong type", map[string]any{"name": 7.0}, []string{"name:type"}},
		{"below minimum", map[string]any{"name": "a", "age": -1.0}, []string{"age:minimum"}},
		{"not an integer", `{"name": "a", "age": 1.5}`, []string{"age:type"}},
		{"enum", map[string]any{"name": "a", "role": secret}, []string{"role:enum"}},
		{"unknown field", map[string]any{"name": "a", "extra": secret}, []string{"extra:additionalProperties"}},
		{"several, sorted", map[string]any{"age": "x", "role": "root"}, []string{"age:type", "name:required", "role:enum"}},
		{"JSON null text", "null", []string{":type"}},
		{"array", []any{1.0}, []string{":type"}},
		{"invalid JSON text", `{"name": "` + secret, []string{"invalid_json"}},
		{"trailing garbage", `{"name": "a"} x`, []string{"invalid_json"}},
		{"plain text", "hello " + secret, []string{"invalid_json"}},
	})
}

func TestAllowInvalidJSON(t *testing.T) {
	runCases(t, map[string]any{"schema": userSchema, "allow_invalid_json": true}, []evalCase{
		{"plain text allowed", "not json at all", nil},
		{"valid JSON still checked", `{"age": 1}`, []string{"name:required"}},
	})
}

func TestRequired(t *testing.T) {
	runCases(t, map[string]any{"required": []any{"query", "user.email"}}, []evalCase{
		{"all present", map[string]any{"query": "q", "user": map[string]any{"email": "e"}}, nil},
		{"present but null counts as present", map[string]any{"query": nil, "user": map[string]any{"email": nil}}, nil},
		{"nested missing", map[string]any{"query": "q", "user": map[string]any{}}, []string{"user.email:required"}},
		{"parent missing", map[string]any{"query": "q"}, []string{"user:required"}},
		{"parent not an object", map[string]any{"query": "q", "user": secret}, []string{"user:type"}},
		{"root not an object", `["query"]`, []string{":type"}},
	})
}

func TestFieldTypes(t *testing.T) {
	runCases(t, map[string]any{"field_types": map[string]any{
		"limit": "integer", "tags": "array", "opts.verbose": "boolean", "note": "null",
	}}, []evalCase{
		{"all right", map[string]any{"limit": 10.0, "tags": []any{}, "opts": map[string]any{"verbose": true}, "note": nil}, nil},
		{"absent fields are fine", map[string]any{}, nil},
		{"wrong types", map[string]any{"limit": 1.5, "tags": "a,b", "opts": map[string]any{"verbose": "yes"}},
			[]string{"limit:type", "opts.verbose:type", "tags:type"}},
	})
}

func TestConstraints(t *testing.T) {
	runCases(t, map[string]any{"constraints": map[string]any{
		"amount":   map[string]any{"min": 0, "max": 1000},
		"currency": map[string]any{"enum": []any{"EUR", "USD"}},
		"to":       map[string]any{"pattern": `^[A-Z]{2}[0-9]{2}[A-Z0-9]{10,30}$`, "max_length": 34},
		"memo":     map[string]any{"min_length": 1, "max_length": 5},
		"items":    map[string]any{"max_length": 2},
	}}, []evalCase{
		{"valid", map[string]any{"amount": 10.0, "currency": "EUR", "to": "DE89370400440532013000", "memo": "rent", "items": []any{1.0}}, nil},
		{"above max", map[string]any{"amount": 5000.0}, []string{"amount:maximum"}},
		{"below min", map[string]any{"amount": -1.0}, []string{"amount:minimum"}},
		{"enum", map[string]any{"currency": secret}, []string{"currency:enum"}},
		{"pattern", map[string]any{"to": secret}, []string{"to:pattern"}},
		{"string too long", map[string]any{"memo": "too long"}, []string{"memo:maxLength"}},
		{"string too short", map[string]any{"memo": ""}, []string{"memo:minLength"}},
		{"array too long", map[string]any{"items": []any{1.0, 2.0, 3.0}}, []string{"items:maxItems"}},
		{"min on a string is ignored", map[string]any{"amount": "lots"}, nil},
	})
}

func TestSchemaAndFieldsTogether(t *testing.T) {
	runCases(t, map[string]any{
		"schema":      map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}},
		"required":    []any{"b"},
		"constraints": map[string]any{"a": map[string]any{"max_length": 2}},
	}, []evalCase{
		{"valid", map[string]any{"a": "x", "b": 1.0}, nil},
		{"both report", map[string]any{"a": 5.0}, []string{"a:type", "b:required"}},
		{"generated only", map[string]any{"a": "long", "b": 1.0}, []string{"a:maxLength"}},
	})
}

func TestSchemaRefsAndCombinators(t *testing.T) {
	runCases(t, map[string]any{"schema": map[string]any{
		"$defs": map[string]any{"id": map[string]any{"type": "string", "pattern": "^[a-z]+$"}},
		"type":  "object",
		"properties": map[string]any{
			"id":     map[string]any{"$ref": "#/$defs/id"},
			"target": map[string]any{"anyOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}},
		},
	}}, []evalCase{
		{"valid", map[string]any{"id": "abc", "target": 3.0}, nil},
		{"ref", map[string]any{"id": "ABC"}, []string{"id:pattern"}},
		{"anyOf is one violation", map[string]any{"target": true}, []string{"target:anyOf"}},
	})
}

type toolArgs struct {
	Name string `json:"name"`
	Age  int    `json:"age"`
}

func TestGoValues(t *testing.T) {
	runCases(t, map[string]any{"schema": userSchema}, []evalCase{
		{"struct valid", toolArgs{Name: "ann", Age: 3}, nil},
		{"struct invalid", toolArgs{Age: -2}, []string{"age:minimum", "name:minLength"}},
		{"typed map", map[string]int{"age": -1}, []string{"age:minimum", "name:required"}},
		{"ints in a plain map", map[string]any{"name": "a", "age": 3}, nil},
	})
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name   string
		config map[string]any
		field  string
		code   string
	}{
		{"nothing to check", map[string]any{"allow_invalid_json": true}, "schema", "required"},
		{"schema not an object", map[string]any{"schema": "x"}, "schema", "type"},
		{"invalid schema keyword", map[string]any{"schema": map[string]any{"properties": map[string]any{"a": map[string]any{"type": 5.0}}}}, "schema.properties.a.type", "invalid_schema"},
		{"invalid schema regex", map[string]any{"schema": map[string]any{"properties": map[string]any{"a": map[string]any{"pattern": "("}}}}, "schema.properties.a.pattern", "invalid_regex"},
		{"external ref", map[string]any{"schema": map[string]any{"$ref": "https://example.com/s.json"}}, "schema", "unsupported_ref"},
		{"file ref", map[string]any{"schema": map[string]any{"$ref": "file:///etc/passwd"}}, "schema", "unsupported_ref"},
		{"empty path segment", map[string]any{"required": []any{"a..b"}}, "required.0", "invalid_path"},
		{"bad type name", map[string]any{"field_types": map[string]any{"a": "int"}}, "field_types.a", "enum"},
		{"min above max", map[string]any{"constraints": map[string]any{"a": map[string]any{"min": 5, "max": 1}}}, "constraints.a.min", "range"},
		{"min_length above max_length", map[string]any{"constraints": map[string]any{"a": map[string]any{"min_length": 5, "max_length": 1}}}, "constraints.a.min_length", "range"},
		{"bad pattern", map[string]any{"constraints": map[string]any{"a": map[string]any{"pattern": "(?<=x)"}}}, "constraints.a.pattern", "invalid_regex"},
		{"unknown constraint", map[string]any{"constraints": map[string]any{"a": map[string]any{"minimum": 1}}}, "constraints.a.minimum", "unknown_field"},
		{"empty constraints", map[string]any{"constraints": map[string]any{"a": map[string]any{}}}, "constraints.a", "type"},
		{"negative length", map[string]any{"constraints": map[string]any{"a": map[string]any{"max_length": -1}}}, "constraints.a.max_length", "type"},
		{"allow_invalid_json not a bool", map[string]any{"required": []any{"a"}, "allow_invalid_json": "yes"}, "allow_invalid_json", "type"},
		{"unknown key", map[string]any{"required": []any{"a"}, "strict": true}, "strict", "unknown_field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.config)
			var ce *evaluator.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want *ConfigError", err)
			}
			for _, p := range ce.Problems {
				if p.Field == tt.field && p.Code == tt.code {
					return
				}
			}
			t.Fatalf("problems %+v, want %s (%s)", ce.Problems, tt.field, tt.code)
		})
	}
}

func TestRegistered(t *testing.T) {
	f, ok := evaluator.Default.Lookup(Name)
	if !ok || f.RequiresAPIKey || f.External {
		t.Fatalf("Lookup(%q) = %+v, %v", Name, f, ok)
	}
	b, err := evaluator.Default.Build(Name, map[string]any{"required": []any{"a"}, "on_error": "allow"})
	if err != nil || b.OnError != evaluator.OnErrorAllow {
		t.Fatalf("Build = %+v, %v", b, err)
	}
	_, err = evaluator.Default.Build(Name, map[string]any{"field_types": map[string]any{"a": "int"}})
	var ce *evaluator.ConfigError
	if !errors.As(err, &ce) || ce.Problems[0].Field != "field_types.a" {
		t.Fatalf("Build(bad) err = %v", err)
	}
}

func TestManyViolationsAreCapped(t *testing.T) {
	var req []any
	for i := range 30 {
		req = append(req, "f"+strings.Repeat("x", i))
	}
	e := mustNew(t, map[string]any{"required": req})
	res, _ := e.Evaluate(context.Background(), &evaluator.Data{Value: map[string]any{}})
	if res.Metadata["violation_count"] != 30 || len(res.Metadata["violations"].([]any)) != maxListed {
		t.Fatalf("metadata = %v", res.Metadata)
	}
	if !strings.Contains(res.Message, "and 10 more") {
		t.Fatalf("message = %q", res.Message)
	}
}
