package guard

import (
	"encoding/json"
	"fmt"
	"testing"
)

func TestSelectorPaths(t *testing.T) {
	step := &Step{
		Type: "tool",
		Name: "search",
		Input: map[string]any{
			"query":    "q",
			"messages": []any{map[string]any{"content": "first"}, map[string]any{"content": "second"}},
			"0":        "key zero",
			"n":        1.5,
		},
		Output:  []any{"a", "b"},
		Context: map[string]any{"user_role": "admin", "nested": map[string]any{"x": nil}},
	}
	type args struct {
		Query string `json:"query"`
	}
	tests := []struct {
		path string
		step *Step
		want any
	}{
		{"type", step, "tool"},
		{"name", step, "search"},
		{"input.query", step, "q"},
		{"input.messages.1.content", step, "second"},
		{"input.messages.2.content", step, nil},
		{"input.messages.-1", step, nil},
		{"input.messages.01", step, nil},
		{"input.0", step, "key zero"},
		{"input.n", step, 1.5},
		{"input.n.x", step, nil},
		{"output.1", step, "b"},
		{"output.x", step, nil},
		{"context.user_role", step, "admin"},
		{"context.nested.x", step, nil},
		{"context.missing.deeper", step, nil},
		{"context", &Step{}, nil},
		{"input", &Step{}, nil},
		{"unknown", step, nil},
		{"input.query", &Step{Input: args{Query: "from a struct"}}, "from a struct"},
		{"input.1", &Step{Input: []string{"a", "b"}}, "b"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			p := compileSelectorPath(tt.path)
			if got := p.resolve(tt.step); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("resolve = %#v, want %#v", got, tt.want)
			}
		})
	}
	whole := compileSelectorPath("*")
	_, text, err := textForm(whole.resolve(&Step{Type: "llm", Name: "c", Input: "hi"}))
	if err != nil || text != `{"context":null,"input":"hi","name":"c","output":null,"type":"llm"}` {
		t.Errorf("* = %s, %v", text, err)
	}
	_ = json.Valid
}
