package problem

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestDuplicateKeys(t *testing.T) {
	many := func(n int, dup bool) string {
		var b strings.Builder
		b.WriteString(`{"m":{`)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"k%d":%d`, i, i)
		}
		if dup {
			b.WriteString(`,"k7":0`)
		}
		b.WriteString(`}}`)
		return b.String()
	}
	for _, tc := range []struct {
		name, body, field string // field "" means no duplicate
	}{
		{"top level", `{"decision":"deny","decision":"allow"}`, "decision"},
		{"nested", `{"data":{"action":{"decision":"deny","decision":"allow"}}}`, "data.action.decision"},
		{"in a list", `{"events":[{"a":1},{"a":1,"b":2,"a":3}]}`, "events.1.a"},
		{"escaped spelling", `{"a":1,"\u0061":2}`, "a"},
		{"escaped first", `{"x\"y":1,"x\u0022y":2}`, `x"y`},
		{"deep metadata", `{"m":{"x":[[{"q":1,"q":2}]]}}`, "m.x.0.0.q"},
		{"sibling objects may share keys", `{"a":{"k":1},"b":{"k":1},"c":[{"k":1},{"k":2}]}`, ""},
		{"key equal to a value", `{"a":"b","b":"a"}`, ""},
		{"case differs", `{"a":1,"A":2}`, ""},
		{"after a nested object", `{"a":{"b":1,"c":2},"d":3,"a":4}`, "a"},
		{"large object", many(100, false), ""},
		{"large object with a repeat", many(100, true), "m.k7"},
		{"just over the linear limit", many(17, true), "m.k7"},
		{"strings with braces", `{"a":"{\"a\":1,\"a\":2}","b":"]"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v map[string]any
			err := DecodeBytes([]byte(tc.body), &v)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("unexpected %v", err)
				}
				return
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.Status != 422 || len(pe.Problems) != 1 {
				t.Fatalf("got %v, want a 422 naming %s", err, tc.field)
			}
			if p := pe.Problems[0]; p.Field != tc.field || p.Code != "duplicate_key" {
				t.Fatalf("problem %+v, want field %q", p, tc.field)
			}
		})
	}
}

// TestDuplicateKeysThroughDecode: every decoding entry point refuses a repeated key, even where the
// target would ignore or never see the field.
func TestDuplicateKeysThroughDecode(t *testing.T) {
	for _, body := range []string{
		`{"one":{"name":"a","name":"b"}}`,
		`{"deep":{"x":1,"x":2}}`,
		`{"unknown":{"x":1,"x":2}}`,
		`{"steps":[],"steps":[]}`,
	} {
		var v outer
		err := DecodeBytes([]byte(body), &v)
		if pe := From(err); err == nil || pe.Status != 422 || pe.Problems[0].Code != "duplicate_key" {
			t.Errorf("strict %s: %v", body, err)
		}
		_, err = DecodeLenientBytes([]byte(body), &v)
		if pe := From(err); err == nil || pe.Status != 422 || pe.Problems[0].Code != "duplicate_key" {
			t.Errorf("lenient %s: %v", body, err)
		}
	}
}

func TestDuplicateKeysNeverPanics(t *testing.T) {
	for _, body := range []string{``, `{`, `}`, `]]]`, `{"a`, `{"a":"\`, `{"a":1,"a`, `[{"a":1},{"a":2}]`, `"\\"`} {
		var v map[string]any
		_ = DecodeBytes([]byte(body), &v)
	}
}

func BenchmarkDuplicateKeys(b *testing.B) {
	body := []byte(`{"agent_name":"bench","stage":"pre","step":{"type":"llm","name":"chat","input":"Please summarise the quarterly report for the team and list the three main risks.","context":{"user":"u-1"}}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for i := 0; i < b.N; i++ {
		var v map[string]any
		if err := DecodeBytes(body, &v); err != nil {
			b.Fatal(err)
		}
	}
}
