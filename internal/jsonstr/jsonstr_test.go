package jsonstr

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// reference is what encoding/json writes for s, with or without HTML escaping.
func reference(t testing.TB, s string, escapeHTML bool) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

var samples = []string{
	"", "plain text", `quote " and backslash \`, "tab\tnew\nline\rcr\bbs\fff", "\x00\x01\x1f\x7f",
	"<script>&amp;</script>", "héllo wörld ✓ 日本", "\u2028\u2029", "bad \xff utf8 \xc3", "emoji 😀",
}

func TestAppendMatchesEncodingJSON(t *testing.T) {
	for _, s := range samples {
		for _, html := range []bool{true, false} {
			if got, want := string(Append(nil, s, html)), reference(t, s, html); got != want {
				t.Errorf("Append(%q, html=%v) = %s, want %s", s, html, got, want)
			}
		}
	}
}

func TestAppendAllocatesNothingIntoRoom(t *testing.T) {
	buf := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() { _ = Append(buf[:0], "a <b> & \"c\"\n", true) }); n != 0 {
		t.Fatalf("%v allocations, want 0", n)
	}
}

func FuzzAppend(f *testing.F) {
	for _, s := range samples {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, html bool) {
		if got, want := string(Append(nil, s, html)), reference(t, s, html); got != want {
			t.Fatalf("Append(%q, html=%v) = %s, want %s", s, html, got, want)
		}
	})
}

func TestAppendFloatMatchesEncodingJSON(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 2, 10, 100, 1e14, 999999999999999, 1e15, -1e15, 1e15 + 2,
		1 << 53, 1<<53 + 2, 1 << 60, -(1 << 60), 0.5, -0.5, 1e14 + 0.5, 0.1, 1.5, 1e-6, 9.99e-7, 1e-7, 123456789, 1e20, 1e21, -1e21, 3.14159e-300, 1.7976931348623157e308} {
		want, _ := json.Marshal(f)
		got, ok := AppendFloat(nil, f)
		if !ok || string(got) != string(want) {
			t.Errorf("AppendFloat(%v) = %s, %v; want %s", f, got, ok, want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got, ok := AppendFloat([]byte("x"), f); ok || string(got) != "x" {
			t.Errorf("AppendFloat(%v) = %s, %v; want nothing appended and false", f, got, ok)
		}
	}
}

func FuzzAppendFloat(f *testing.F) {
	f.Add(1.5)
	f.Add(1e-7)
	f.Add(42.0)
	f.Add(-7e14)
	f.Add(math.Copysign(0, -1))
	f.Fuzz(func(t *testing.T, x float64) {
		want, err := json.Marshal(x)
		got, ok := AppendFloat(nil, x)
		if (err == nil) != ok || ok && string(got) != string(want) {
			t.Fatalf("AppendFloat(%v) = %s, %v; encoding/json %s, %v", x, got, ok, want, err)
		}
	})
}

// TestAppendCanonical: RFC 8785's string form: the short escapes, \u00xx for other control characters,
// no HTML or U+2028 escapes, and invalid UTF-8 refused.
func TestAppendCanonical(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"plain", `"plain"`, true},
		{"q\"b\\", `"q\"b\\"`, true},
		{"\b\f\n\r\t\x01\x1f", `"\b\f\n\r\t\u0001\u001f"`, true},
		{"<&>\u2028é€😀", "\"<&>\u2028é€😀\"", true},
		{"bad\xff", "", false},
	}
	for _, tt := range tests {
		got, ok := AppendCanonical(nil, tt.in)
		if ok != tt.ok || (ok && string(got) != tt.want) {
			t.Errorf("AppendCanonical(%q) = %s, %v; want %s, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
