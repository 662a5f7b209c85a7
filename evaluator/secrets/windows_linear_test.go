package secrets

import (
	"context"
	"strings"
	"testing"
)

// scannedBytes is how many bytes the rules' regexes would run on for text: the sum of every rule's windows.
func scannedBytes(e *Evaluator, text string) int {
	hits := e.kw.find(text, nil)
	byRule := map[int32][]hit{}
	for _, h := range hits {
		byRule[h.rule] = append(byRule[h.rule], h)
	}
	total := 0
	for id, hs := range byRule {
		for _, w := range e.rules[id].windows(text, hs, nil) {
			total += w.end - w.start
		}
	}
	return total
}

// TestWindowsLinearInText: text dense in the rules' key words (each followed by "," or ":", which opens a
// "name = value" window) is scanned a bounded number of times over, not once per key word over maxAfter
// bytes (issue 37: 64 KB of "The api key, as noted, ..." took 11 s).
func TestWindowsLinearInText(t *testing.T) {
	e, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, para string
		factor     int
	}{
		{"key words before short words", densePara, 0},
		{"key words before long values", "token: q7Rz2Lm9Xv4Kp8Wd, secret: Hn5Tb3Jc8Ys1Qe6Gu, ", 8},
		{"a JWT opener in prose", "eyJ is how a JWT starts: eyJhbGciOiJIUzI1NiJ9 and so on. ", 8},
	} {
		for _, n := range []int{4 << 10, 64 << 10} {
			text := sizedText(tc.para, n, "")
			if got := scannedBytes(e, text); got > tc.factor*len(text) {
				t.Errorf("%s, %d bytes: the windows cover %d bytes, more than %d times the text", tc.name, n, got, tc.factor)
			}
		}
	}
}

// TestLongValuesStillFound: bounding the windows by the text keeps the findings whose values run long: a
// generic secret of 600 bytes, and one at the end of a long run of key words.
func TestLongValuesStillFound(t *testing.T) {
	e, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("q7Rz2Lm9Xv4Kp8WdHn5Tb3Jc8Ys1Qe6Gu", 20)[:600]
	for _, text := range []string{
		"secret: " + long + "\n",
		sizedText(densePara, 64<<10, " secret: "+long[:40]),
		"auth_token = \"" + long[:100] + "\"",
	} {
		f, err := e.Scan(context.Background(), text)
		if err != nil {
			t.Fatal(err)
		}
		if len(f) == 0 {
			t.Errorf("no finding in %.60q...", text)
		}
	}
}
