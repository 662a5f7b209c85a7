package problem

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

// TestInvalidJSONSaysWhere: the INVALID_JSON detail gives the line and column where the JSON broke, a hint
// for a regex with a single backslash, and none of the body.
func TestInvalidJSONSaysWhere(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []string // substrings of the detail
		hint       bool
	}{
		{"regex with one backslash", `{"data":{"pattern":"\d{3}-SECRETX"}}`, []string{"line 1, column 21 (byte 21)"}, true},
		{"regex on line 3", "{\n  \"name\": \"x\",\n  \"pattern\": \"\\sSECRETX\"\n}", []string{"line 3, column 15"}, true},
		{"after a multi-byte character", `{"é":"\w+SECRETX"}`, []string{"line 1, column 7 (byte 8)"}, true},
		{"a doubled backslash is fine, then a missing comma", `{"p":"\\dSECRETX" "q":1}`, []string{"line 1, column 19 (byte 19)"}, false},
		{"escaped backslash before d", `{"p":"\\\dSECRETX"}`, []string{"column 9"}, true},
		{"truncated", `{"name":"SECRETX`, []string{"ends early", "line 1, column 17 (byte 16)"}, false},
		{"truncated over lines", "{\n\"a\": [1,\n", []string{"ends early", "line 3, column 1"}, false},
		{"trailing data", `{"name":"x"} SECRETX`, []string{"line 1, column 14"}, false},
		{"not JSON", `SECRETX`, []string{"line 1, column 1 (byte 1)"}, false},
	} {
		var v map[string]any
		err := DecodeBytes([]byte(tc.body), &v)
		var pe *Error
		if !errors.As(err, &pe) || pe.Status != http.StatusBadRequest || pe.Code != CodeInvalidJSON {
			t.Errorf("%s: %v, want 400 INVALID_JSON", tc.name, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(pe.Detail, w) {
				t.Errorf("%s: detail %q lacks %q", tc.name, pe.Detail, w)
			}
		}
		if got := strings.Contains(pe.Detail, `double the backslash`); got != tc.hint {
			t.Errorf("%s: hint %v, want %v: %q", tc.name, got, tc.hint, pe.Detail)
		}
		if strings.Contains(pe.Detail, "SECRETX") || strings.Contains(pe.Detail, "'") {
			t.Errorf("%s: the detail echoes the body: %q", tc.name, pe.Detail)
		}
	}
}
