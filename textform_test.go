package guard

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

// stdText is the reference: encoding/json with HTML escaping off, without the trailing newline.
func stdText(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func TestTextFormMatchesEncodingJSON(t *testing.T) {
	values := []any{
		true, false, 0.0, math.Copysign(0, -1), 1.0, 42.0, 2.5, -1e-7, 1e21, 123456789012345680000.0, 1e-6, 3.14159e-10, math.MaxFloat64,
		"", "plain", "<html> & 'quotes' \"double\"", "tab\tnew\nline\r\b\f\x00\x1f", "é ü 中文 \u2028 \u2029", "bad \xff utf8",
		[]any{}, []any{1.0, "a", nil, true}, map[string]any{}, map[string]any{"b": 1.0, "a": []any{map[string]any{"z": "y", "c": nil}}},
		map[string]any{"é": 1.0, "A": 2.0, "a": 3.0, "": 4.0}, json.Number("12.50"),
	}
	for _, v := range values {
		_, got, err := textForm(v)
		if err != nil {
			t.Fatalf("%#v: %v", v, err)
		}
		if s, ok := v.(string); ok {
			if got != s {
				t.Errorf("string %q became %q", s, got)
			}
			continue
		}
		if want := stdText(t, v); got != want {
			t.Errorf("%#v: got %s, want %s", v, got, want)
		}
	}
}

func TestTextFormGoTypes(t *testing.T) {
	type args struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	tests := []struct {
		in        any
		wantText  string
		wantValue any
	}{
		{42, "42", 42.0},
		{args{"q", 3}, `{"limit":3,"query":"q"}`, map[string]any{"limit": 3.0, "query": "q"}},
		{[]string{"a", "b"}, `["a","b"]`, []any{"a", "b"}},
		{map[string]int{"b": 1, "a": 2}, `{"a":2,"b":1}`, map[string]any{"a": 2.0, "b": 1.0}},
		{[]any{1, "x"}, `[1,"x"]`, []any{1.0, "x"}},
		{nil, "", nil},
	}
	for _, tt := range tests {
		v, text, err := textForm(tt.in)
		if err != nil || text != tt.wantText {
			t.Errorf("%#v: %q, %v; want %q", tt.in, text, err, tt.wantText)
		}
		if stdText(t, v) != stdText(t, tt.wantValue) {
			t.Errorf("%#v: value %#v, want %#v", tt.in, v, tt.wantValue)
		}
	}
}

func TestTextFormLimits(t *testing.T) {
	deep := any("x")
	for i := 0; i < 100_000; i++ {
		deep = []any{deep}
	}
	if _, _, err := textForm(deep); !errors.Is(err, errTooDeep) {
		t.Errorf("100k-deep array: %v", err)
	}
	deepMap := any("x")
	for i := 0; i < MaxSelectedDepth+1; i++ {
		deepMap = map[string]any{"k": deepMap}
	}
	if _, _, err := textForm(deepMap); !errors.Is(err, errTooDeep) {
		t.Errorf("deep object: %v", err)
	}
	ok := any("x")
	for i := 0; i < MaxSelectedDepth; i++ {
		ok = []any{ok}
	}
	if _, _, err := textForm(ok); err != nil {
		t.Errorf("depth %d: %v", MaxSelectedDepth, err)
	}
	big := make([]any, 0, 1024)
	chunk := strings.Repeat("a", 1<<14)
	for i := 0; i < 1024; i++ {
		big = append(big, chunk)
	}
	if _, _, err := textForm(big); !errors.Is(err, errTooLarge) {
		t.Errorf("16 MiB array: %v", err)
	}
	for _, v := range []any{math.NaN(), math.Inf(1), []any{math.Inf(-1)}, func() {}, make(chan int)} {
		if _, _, err := textForm(v); !errors.Is(err, errNotJSON) {
			t.Errorf("%T: %v", v, err)
		}
	}
}
