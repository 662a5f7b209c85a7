package jsonvalidate

import (
	"context"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
)

func TestDuplicateKey(t *testing.T) {
	many := `{`
	for i := range 20 {
		many += `"k` + string(rune('a'+i)) + `":1,`
	}
	for _, tc := range []struct {
		s   string
		dup bool
	}{
		{`{"a":1,"b":2}`, false},
		{`{"a":1,"a":2}`, true},
		{`{"a":1,"\u0061":2}`, true},
		{`{"a":{"a":1},"b":[{"a":1},{"a":2}]}`, false},
		{`{"a":{"x":1,"x":2}}`, true},
		{`[{"a":1},{"a":1,"b":{"c":[1,{"a":1,"a":1}]}}]`, true},
		{`{"a":"\"a\":1,","b":"a"}`, false},
		{`{"a\\":1,"a":2}`, false},
		{many + `"ka":2}`, true},
		{many + `"zz":2}`, false},
		{`"just a string"`, false},
	} {
		if got := duplicateKey(tc.s); got != tc.dup {
			t.Errorf("%s: %v, want %v", tc.s, got, tc.dup)
		}
	}
}

// TestDuplicateKeysAreInvalid: issue 23's audit. {"role":"admin","role":"user"} passed an enum of "user"
// (encoding/json kept the last key), while the tool receiving the text may read the first; it is now
// invalid JSON, a match (or, with allow_invalid_json, no verdict on it).
func TestDuplicateKeysAreInvalid(t *testing.T) {
	e, err := New(map[string]any{"json_schema": map[string]any{"type": "object", "properties": map[string]any{"role": map[string]any{"enum": []any{"user"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`{"role":"admin","role":"user"}`, `{"role":"user","r\u006fle":"admin"}`} {
		res, err := e.Evaluate(context.Background(), &evaluator.Data{Value: s, Text: s})
		if err != nil || !res.Matched || res.Metadata["invalid_json"] != true {
			t.Fatalf("%s: %+v %v", s, res, err)
		}
	}
}
