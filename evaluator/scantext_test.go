package evaluator

import (
	"encoding/json"
	"testing"
)

func TestScanText(t *testing.T) {
	for _, tc := range []struct {
		value any
		want  string
	}{
		{"a\nb", "a\nb"}, // a string is itself
		{map[string]any{"m": "a\nb"}, "{\"m\":\"a\n b\"}"},
		{map[string]any{"m": "a\tb\x01c"}, "{\"m\":\"a\t b\x01     c\"}"},
		{map[string]any{"m": `q"\`}, "{\"m\":\"q\" \\ \"}"},
		{[]any{"\u2028x"}, "[\"      x\"]"},
		{map[string]any{"m": "plain"}, `{"m":"plain"}`},
	} {
		text := ""
		if s, ok := tc.value.(string); ok {
			text = s
		} else {
			b, _ := json.Marshal(tc.value)
			text = string(b)
		}
		got := ScanText(&Data{Value: tc.value, Text: text})
		if got != tc.want || len(got) != len(text) {
			t.Errorf("%q: %q, want %q (same length as %q)", tc.value, got, tc.want, text)
		}
	}
}
