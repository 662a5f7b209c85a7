package guard_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/guardrail-control/guard"
)

// wholeTextPrefixes are texts put before (and after) what a control looks for: a parser or tokenizer
// that stops early (a NUL, invalid UTF-8), a length cap that checks a prefix (1 MiB of padding), case
// folding that changes lengths (İ folds to two runes, ẞ to ß, the Kelvin sign to k), zero-width and
// combining characters that shift rune and byte offsets apart. Issue 23's rule: a verdict covers the
// whole selected text, so every one of them still finds the target.
var wholeTextPrefixes = map[string]string{
	"nothing":              "",
	"NUL":                  "\x00",
	"NULs":                 strings.Repeat("\x00", 64),
	"invalid UTF-8":        "\xff\xfe\xc3",
	"encoded surrogate":    "\xed\xa0\x80",
	"1 MiB of padding":     strings.Repeat("a ", 1<<19),
	"multibyte padding":    strings.Repeat("é", 100000),
	"dotted capital I":     strings.Repeat("İ", 1000),
	"capital sharp s":      strings.Repeat("ẞ", 1000),
	"Kelvin sign":          strings.Repeat("K", 1000),
	"zero-width":           strings.Repeat("\u200b", 1000),
	"combining marks":      strings.Repeat("e\u0301", 1000),
	"replacement char":     strings.Repeat("\ufffd", 1000),
	"CRLF":                 "\r\n\r\n",
	"invalid then padding": "\xff" + strings.Repeat("x ", 70000),
	"a word with a digit":  "ref42",
	"words with digits":    "A1 b2-c3 v1.2.3 x9",
}

// wholeTextControls are one control per evaluator family (and per regex engine), each with the text it
// must find.
var wholeTextControls = []struct {
	name   string
	ev     string
	config map[string]any
	target string
	redact bool // the evaluator names spans: the target must be gone from the redacted output
}{
	{"regex (RE2)", "regex", map[string]any{"pattern": `secret-\d{4}`}, "secret-1234", true},
	{"regex (backtracking)", "regex", map[string]any{"pattern": `secret-(?=\d)\d{4}`}, "secret-1234", true},
	{"regex case-insensitive", "regex", map[string]any{"pattern": `(?i)secret-\d{4}`}, "SECRET-1234", true},
	{"list contains", "list", map[string]any{"values": []any{"drop the table"}, "match_mode": "contains"}, "DROP the Table", true},
	{"list contains non-ASCII", "list", map[string]any{"values": []any{"straße"}, "match_mode": "contains"}, "STRASSE straße", true},
	{"list ends_with", "list", map[string]any{"values": []any{"the end"}, "match_mode": "ends_with"}, "the end", false},
	{"pii email", "pii", map[string]any{"entities": []any{"email"}}, "alice@example.com", true},
	{"pii ssn", "pii", map[string]any{"entities": []any{"us_ssn"}}, "ssn 078-05-1121", true},
	{"pii card", "pii", map[string]any{"entities": []any{"credit_card"}}, "4111 1111 1111 1111", true},
	{"secrets", "secrets", map[string]any{}, "token ghp_R8x2Lq9ZtV4mN7cW1pK3sY6dF0hJ5gB2aQeT", true},
	{"secrets AWS key alone", "secrets", map[string]any{}, "AKIAZ3MSJV4WWBSBGPMV", true},
}

// TestVerdictCoversTheWholeText: the audit of issue 23 as a test. For every evaluator family, the target
// after (and before) each prefix is found, and a redacting control leaves none of it in the output.
func TestVerdictCoversTheWholeText(t *testing.T) {
	for _, c := range wholeTextControls {
		t.Run(c.name, func(t *testing.T) {
			var redact *guard.Redaction
			decision := guard.DecisionDeny
			if c.redact {
				redact, decision = &guard.Redaction{}, guard.DecisionWarn
			}
			e := guard.New()
			if err := e.Update([]guard.Control{{ID: 1, Name: "c", Data: guard.ControlData{Enabled: true,
				Condition: guard.Condition{Selector: &guard.Selector{Path: "output"}, Evaluator: &guard.EvaluatorSpec{Name: c.ev, Config: c.config}},
				Action:    guard.Action{Decision: decision, Redact: redact}}}}); err != nil {
				t.Fatal(err)
			}
			for pname, prefix := range wholeTextPrefixes {
				texts := map[string]string{"after": prefix + " " + c.target}
				// Between two copies of the prefix too, but the long paddings once (their cost is the test's).
				if (c.ev != "list" || c.config["match_mode"] != "ends_with") && len(prefix) < 64<<10 {
					texts["between"] = prefix + " " + c.target + " " + prefix
				}
				for where, text := range texts {
					res, err := e.Evaluate(context.Background(), &guard.Step{Type: "llm", Name: "chat", Output: text}, guard.StagePost)
					if err != nil {
						t.Fatal(err)
					}
					if len(res.Matches) != 1 {
						t.Errorf("%s, target %s: not found (errors %v)", pname, where, res.Errors)
						continue
					}
					if c.redact {
						out, _ := res.Redacted.Output.(string)
						if strings.Contains(out, c.target) || !strings.HasPrefix(out, prefix) {
							t.Errorf("%s, target %s: redacted output keeps the target or loses the prefix: %.80q", pname, where, out[max(0, len(prefix)-10):])
						}
					}
				}
			}
		})
	}
}

// TestVerdictCoversStructuredValues: a selected object or array is judged whole: the target in a nested
// string, in an object key, or deep in arrays is found by every evaluator family.
func TestVerdictCoversStructuredValues(t *testing.T) {
	for _, c := range wholeTextControls {
		if c.ev == "list" && c.config["match_mode"] == "ends_with" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			e := guard.New()
			if err := e.Update([]guard.Control{{ID: 1, Name: "c", Data: guard.ControlData{Enabled: true,
				Condition: guard.Condition{Selector: &guard.Selector{Path: "output"}, Evaluator: &guard.EvaluatorSpec{Name: c.ev, Config: c.config}},
				Action:    guard.Action{Decision: guard.DecisionDeny}}}}); err != nil {
				t.Fatal(err)
			}
			var deep any = "x \x00 " + c.target
			for range 100 {
				deep = []any{"\xff", deep}
			}
			for name, v := range map[string]any{
				"nested string":  map[string]any{"a": map[string]any{"b": "\x00 " + c.target}},
				"object key":     map[string]any{c.target: true},
				"deep in arrays": deep,
				"after a number": []any{1.5, "\xff\xfe " + c.target},
				// The JSON text form escapes these: "\n" glued its "n" to the target.
				"after a newline":      map[string]any{"m": "x\n" + c.target},
				"after a tab":          map[string]any{"m": "x:\t" + c.target + "\r\n"},
				"after a control char": map[string]any{"m": "\x01" + c.target + "\x02"},
				"after a quote":        map[string]any{"m": `say "` + c.target + `"`},
				"an object in a list":  []any{"x", map[string]any{"m": "y\n" + c.target}},
			} {
				res, err := e.Evaluate(context.Background(), &guard.Step{Type: "llm", Name: "chat", Output: v}, guard.StagePost)
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Matches) != 1 {
					t.Errorf("%s: not found (errors %v)", name, res.Errors)
				}
			}
		})
	}
}

// TestRedactionCoversWhatMatched: issue 23's audit. A redacting control matched an object through
// something no string of it holds (an email as a key, a card number as a JSON number, a match across two
// strings), found no span in its strings, and passed the value on unredacted. Such a value is now
// replaced whole; a match inside a string still has only its span replaced, and an absence (list
// no_match) replaces nothing.
func TestRedactionCoversWhatMatched(t *testing.T) {
	tests := []struct {
		name   string
		ev     string
		config map[string]any
		output any
		want   string // the redacted output as JSON; "" for no redaction
	}{
		{"email as a key", "pii", map[string]any{"entities": []any{"email"}}, map[string]any{"alice@example.com": 1.0}, `"[REDACTED:pii]"`},
		{"card as a number", "pii", map[string]any{"entities": []any{"credit_card"}}, map[string]any{"card": 4111111111111111.0}, `"[REDACTED:pii]"`},
		{"card as the whole output", "pii", map[string]any{"entities": []any{"credit_card"}}, 4111111111111111.0, `"[REDACTED:pii]"`},
		{"across strings", "regex", map[string]any{"pattern": `secret","b":"1234`}, map[string]any{"a": "secret", "b": "1234"}, `"[REDACTED:regex]"`},
		{"inside a string", "pii", map[string]any{"entities": []any{"email"}}, map[string]any{"a": "mail alice@example.com", "n": 1.0}, `{"a":"mail [REDACTED:email]","n":1}`},
		{"absence", "list", map[string]any{"values": []any{"approved"}, "match_mode": "contains", "match_on": "no_match"}, map[string]any{"a": "pending"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := guard.New()
			if err := e.Update([]guard.Control{{ID: 1, Name: "c", Data: guard.ControlData{Enabled: true,
				Condition: guard.Condition{Selector: &guard.Selector{Path: "output"}, Evaluator: &guard.EvaluatorSpec{Name: tt.ev, Config: tt.config}},
				Action:    guard.Action{Decision: guard.DecisionWarn, Redact: &guard.Redaction{}}}}}); err != nil {
				t.Fatal(err)
			}
			res, err := e.Evaluate(context.Background(), &guard.Step{Type: "llm", Name: "chat", Output: tt.output}, guard.StagePost)
			if err != nil || len(res.Matches) != 1 {
				t.Fatalf("matches %d, err %v", len(res.Matches), err)
			}
			got := ""
			if res.Redacted != nil {
				b, _ := json.Marshal(res.Redacted.Output)
				got = string(b)
			}
			if got != tt.want {
				t.Fatalf("redacted %s, want %s", got, tt.want)
			}
		})
	}
}
