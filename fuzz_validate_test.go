package guard_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/internal/cases"
)

// FuzzParseControlData decodes arbitrary bytes as control data. It must never panic; it fails only with
// a *ValidationError that has problems; and what it accepts must validate again and survive a JSON round
// trip unchanged. Seeds: every control of the decision corpus plus malformed variants of one.
func FuzzParseControlData(f *testing.F) {
	files, err := cases.Load("testdata/cases")
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		for _, c := range file.Cases {
			for _, ctl := range c.Controls {
				f.Add([]byte(ctl.Data))
			}
		}
	}
	base := `{"condition":{"selector":{"path":"input"},"evaluator":{"name":"regex","config":{"pattern":"a"}}},"action":{"decision":"deny"}}`
	for _, s := range []string{
		"", "null", "0", `"x"`, "[]", "{}", base[:len(base)/2], base + "x", strings.ReplaceAll(base, `"`, `'`),
		strings.Repeat("[", 100) + strings.Repeat("]", 100),
		`{"condition":` + strings.Repeat(`{"not":`, 10) + `{}` + strings.Repeat(`}`, 10) + `,"action":{"decision":"deny"}}`,
		`{"selector":{"path":"input"},"evaluator":{"name":"list","config":{"values":["a"]}},"condition":{},"action":{"decision":"observe"}}`,
		`{"description":"\u00e9\ud800","tags":["\u2028"],"condition":{"and":[{"selector":{"path":"*"},"evaluator":{"name":"list","config":{"values":["x"],"<":1e308}}}]},"action":{"decision":"steer","steering_context":{"message":"m","required_actions":[]},"metadata":{}}}`,
		"{\"description\":\"\xff\xfe\",\"condition\":{\"selector\":{\"path\":\"input.0.a\"},\"evaluator\":{\"name\":\"regex\",\"config\":{\"pattern\":\"(?=a)\",\"timeout_ms\":5}}},\"action\":{\"decision\":\"log\"},\"enabled\":false}",
		`{"scope":{"stages":["pre","post","pre"],"step_types":["llm"],"step_names":["a"],"step_name_regex":""},"condition":{"or":[{"selector":{"path":"context.x"},"evaluator":{"name":"regex","config":{"pattern":"-0","on_error":"allow"},"metadata":{"k":-0}}}]},"action":{"decision":"warn","metadata":{"n":-0.0}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := guard.ParseControlData(raw)
		if err != nil {
			var ve *guard.ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) == 0 {
				t.Fatalf("error %T without problems: %v", err, err)
			}
			for _, p := range ve.Problems {
				if p.Code == "" || p.Message == "" {
					t.Fatalf("problem without code or message: %+v", p)
				}
			}
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("accepted data does not validate again: %v", err)
		}
		again, err := json.Marshal(&d)
		if err != nil {
			t.Fatalf("marshal accepted data: %v", err)
		}
		d2, err := guard.ParseControlData(again)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", again, err)
		}
		if !reflect.DeepEqual(d, d2) {
			t.Fatalf("round trip changed the data:\n%#v\n%#v", d, d2)
		}
	})
}
