package jsonstr

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// TestUnescape: what Unescape decodes is what encoding/json decodes, and what it refuses is a bad escape or
// a surrogate that does not pair (encoding/json replaces those by U+FFFD; the decoders using Unescape then
// leave the string to encoding/json).
func TestUnescape(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		ok   bool
		want string
	}{
		{`plain`, true, "plain"},
		{`a\"b\\c\/d`, true, `a"b\c/d`},
		{`\b\f\n\r\t`, true, "\b\f\n\r\t"},
		{`\u0041\u00e9\u20AC`, true, "Aé€"},
		{`\ud83d\ude00 smile`, true, "😀 smile"},
		{`é and \n`, true, "é and \n"},
		{`\x`, false, ""},
		{`\`, false, ""},
		{`\u12`, false, ""},
		{`\u12G4`, false, ""},
		{`\ud83d`, false, ""},        // a high surrogate alone
		{`\ude00`, false, ""},        // a low surrogate alone
		{`\ud83d\u0041`, false, ""},  // a high surrogate before a character that is not a low one
		{`\ud83dx\ude00`, false, ""}, // the pair must follow at once
	} {
		got, ok := Unescape([]byte(tc.raw))
		if ok != tc.ok || got != tc.want {
			t.Errorf("Unescape(%q) = %q, %v; want %q, %v", tc.raw, got, ok, tc.want, tc.ok)
		}
		if ok {
			var v string
			if err := json.Unmarshal([]byte(`"`+tc.raw+`"`), &v); err != nil || v != got {
				t.Errorf("%q: encoding/json gives %q (%v), Unescape %q", tc.raw, v, err, got)
			}
		}
	}
}

// FuzzUnescape: on every string body encoding/json accepts (the callers' scanners have checked the body's
// quotes and control characters before), what Unescape decodes is what encoding/json decodes.
func FuzzUnescape(f *testing.F) {
	for _, s := range []string{`a\nb`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, `\\\"`, `x\u0000y`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !utf8.ValidString(raw) {
			return // Unescape's callers hand it valid UTF-8 only
		}
		got, ok := Unescape([]byte(raw))
		var v string
		if json.Unmarshal([]byte(`"`+raw+`"`), &v) != nil {
			return
		}
		if ok && v != got {
			t.Fatalf("Unescape(%q) = %q; encoding/json: %q", raw, got, v)
		}
	})
}
