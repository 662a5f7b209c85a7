package templates_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/templates"
)

// FuzzRender renders shipped templates with arbitrary parameter objects: a render never panics, and it
// either answers control data that parses back unchanged and passes its kept tests, or a ValidationError
// whose every problem is about a parameter.
func FuzzRender(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"decision":"warn"}`, `{"allowed_tools":["a","b"],"case_sensitive":false}`, `{"pattern":"(?<=a)b"}`,
		`{"pattern":"("}`, `{"max_amount":1e309}`, `{"tools":["x"],"amount_field":"a..b"}`, `{"path":"input\"}"}`,
		`{"stages":["post"],"min_confidence":0.99}`, `{"tool_names":["q"],"blocked_operations":["SELECT","DDL"]}`,
	} {
		for i := range templates.Shipped().List() {
			f.Add(i, seed)
		}
	}
	list := templates.Shipped().List()
	f.Fuzz(func(t *testing.T, which int, params string) {
		if which < 0 {
			which = -which
		}
		tpl := list[which%len(list)]
		var p map[string]any
		if json.Unmarshal([]byte(params), &p) != nil {
			return
		}
		r, err := tpl.Render(context.Background(), p)
		if err != nil {
			var ve *guard.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("%s: not a ValidationError: %v", tpl.Name, err)
			}
			for _, pr := range ve.Problems {
				if len(pr.Field) < len("parameters.") || pr.Field[:len("parameters.")] != "parameters." {
					t.Fatalf("%s %s: a problem not about a parameter: %+v", tpl.Name, params, pr)
				}
			}
			return
		}
		raw, err := json.Marshal(r.Data)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := guard.ParseControlData(raw); err != nil {
			t.Fatalf("%s %s: rendered data does not parse: %v", tpl.Name, params, err)
		}
		if err := guard.CheckControlTests(context.Background(), tpl.Name, r.Data); err != nil {
			t.Fatalf("%s %s: kept tests fail: %v", tpl.Name, params, err)
		}
	})
}
