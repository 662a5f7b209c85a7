package client

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadControlsFileFor(t *testing.T) {
	const controls = `controls:
  - {name: a, data: {condition: {selector: {path: input}, evaluator: {name: regex, config: {pattern: x}}}, action: {decision: deny}}}
  - {name: b, data: {condition: {selector: {path: input}, evaluator: {name: custom.unknown, config: {}}}, action: {decision: log}}}
`
	cases := []struct {
		name  string
		body  string
		agent string
		want  string // control names, comma-separated
	}{
		{"no agents: every control", controls, "bot", "a,b"},
		{"agent listed: its controls", controls + "agents:\n  - {name: bot, controls: [b]}\n", "bot", "b"},
		{"agents listed, not this one: none", controls + "agents:\n  - {name: other, controls: [a]}\n", "bot", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "controls.yaml")
			if err := os.WriteFile(path, []byte(c.body), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := loadControlsFileFor(path, c.agent, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, g := range got {
				names = append(names, g.Name)
			}
			if strings.Join(names, ",") != c.want {
				t.Fatalf("controls %v, want %s", names, c.want)
			}
		})
	}
}

func TestLoadControlsFileProblems(t *testing.T) {
	path := filepath.Join(t.TempDir(), "controls.yaml")
	body := "controls:\n  - {name: a, data: {condition: {selector: {path: input}, evaluator: {name: regex, config: {pattern: '('}}}, action: {decision: deny}}}\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadControlsFile(path, nil)
	if err == nil || !strings.Contains(err.Error(), `control "a": controls.0.data.condition.evaluator.config.pattern`) || !strings.Contains(err.Error(), path) {
		t.Fatalf("err %v", err)
	}
}
