package jsonvalidate

import (
	"context"
	"reflect"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
)

// TestCanonical: schema is stored as json_schema with its draft made explicit; every other config is
// left alone; the argument is not modified; applying it twice changes nothing.
func TestCanonical(t *testing.T) {
	tuple := map[string]any{"type": "array", "prefixItems": []any{map[string]any{"type": "string"}}}
	draft7 := map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}
	tests := []struct {
		name      string
		in, want  map[string]any
		unchanged bool
	}{
		{"schema without a draft", map[string]any{"schema": tuple, "on_error": "allow"},
			map[string]any{"json_schema": map[string]any{"$schema": draft2020URI, "type": "array", "prefixItems": tuple["prefixItems"]}, "on_error": "allow"}, false},
		{"schema naming its draft", map[string]any{"schema": draft7, "allow_invalid_json": true},
			map[string]any{"json_schema": draft7, "allow_invalid_json": true}, false},
		{"json_schema as written", map[string]any{"json_schema": tuple}, nil, true},
		{"reference field names as written", map[string]any{"required_fields": []any{"a"}, "field_constraints": map[string]any{"a": map[string]any{"max": 1}}}, nil, true},
		{"guard field names as written", map[string]any{"required": []any{"a"}, "constraints": map[string]any{"a": map[string]any{"max": 1}}}, nil, true},
		{"both names (invalid) untouched", map[string]any{"schema": tuple, "json_schema": tuple}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := deepCopy(tt.in)
			got := Canonical(tt.in)
			if !reflect.DeepEqual(tt.in, before) {
				t.Fatalf("argument modified: %v", tt.in)
			}
			want := tt.want
			if tt.unchanged {
				want = before
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %v\nwant %v", got, want)
			}
			if again := Canonical(got); !reflect.DeepEqual(again, got) {
				t.Fatalf("not idempotent: %v", again)
			}
		})
	}
}

// TestCanonicalMeansTheSame: a schema that behaves differently under draft 2020-12 and draft 7
// (prefixItems exists only in 2020-12) gives the same verdicts before and after Canonical, which a bare
// rename to json_schema would not.
func TestCanonicalMeansTheSame(t *testing.T) {
	cfg := map[string]any{"schema": map[string]any{"type": "array", "prefixItems": []any{map[string]any{"type": "string"}}}}
	canon := Canonical(cfg)
	renamed := map[string]any{"json_schema": cfg["schema"]}
	for _, v := range []any{[]any{"a", 1.0}, []any{1.0}, []any{}, "not an array"} {
		want := verdict(t, cfg, v)
		if got := verdict(t, canon, v); got != want {
			t.Fatalf("%v: canonical config matched=%v, written config %v", v, got, want)
		}
		if v, ok := v.([]any); ok && len(v) == 1 && verdict(t, renamed, v) == want {
			t.Fatalf("a bare rename (draft 7) should ignore prefixItems: the test does not tell the drafts apart")
		}
	}
}

func verdict(t *testing.T, cfg map[string]any, v any) bool {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Evaluate(context.Background(), &evaluator.Data{Value: v})
	if err != nil {
		t.Fatal(err)
	}
	return res.Matched
}

func deepCopy(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			v = deepCopy(sub)
		}
		out[k] = v
	}
	return out
}
