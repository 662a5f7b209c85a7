package cases

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

const goodFile = `
cases:
  - name: ssn is denied
    controls:
      - id: 1
        name: block-ssn
        data: {condition: {selector: {path: input}, evaluator: {name: regex, config: {pattern: '\b\d{3}-\d{2}-\d{4}\b'}}}, action: {decision: deny}}
    step: {type: llm, name: chat, input: "my ssn is 123-45-6789"}
    stage: pre
    want:
      decision: deny
      matches: [block-ssn]
      errors: []
      non_matches: []
      confidence: 1.0
  - name: bad pattern
    execution: [server, sdk]
    controls:
      - {id: 2, name: bad, data: {}}
    step: {type: llm, name: chat}
    stage: pre
    want:
      invalid: true
      problems: [controls.0.condition]
`

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "b.yaml", goodFile)
	write(t, dir, "a.yaml", strings.Replace(goodFile, "ssn is denied", "other", 1))
	write(t, dir, "notes.txt", "ignored")
	files, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Name != "a" || files[1].Name != "b" {
		t.Fatalf("files = %+v", files)
	}
	c := files[1].Cases[0]
	if c.Name != "ssn is denied" || c.Stage != "pre" || len(c.Controls) != 1 || c.Controls[0].ID != 1 {
		t.Errorf("case = %+v", c)
	}
	var data struct {
		Condition struct {
			Evaluator struct {
				Config struct {
					Pattern string `json:"pattern"`
				} `json:"config"`
			} `json:"evaluator"`
		} `json:"condition"`
	}
	if err := json.Unmarshal(c.Controls[0].Data, &data); err != nil {
		t.Fatal(err)
	}
	if data.Condition.Evaluator.Config.Pattern != `\b\d{3}-\d{2}-\d{4}\b` {
		t.Errorf("pattern = %q", data.Condition.Evaluator.Config.Pattern)
	}
	if c.Want.NonMatches == nil || len(*c.Want.NonMatches) != 0 || c.Want.Confidence == nil || *c.Want.Confidence != 1 {
		t.Errorf("optional fields: %+v", c.Want)
	}
	if c.Want.SteeringMessage != nil {
		t.Error("steering_message should be absent")
	}
	if got := c.Executions(); len(got) != 1 || got[0] != "server" {
		t.Errorf("default executions = %v", got)
	}
	if got := files[1].Cases[1].Executions(); len(got) != 2 {
		t.Errorf("executions = %v", got)
	}
	raw, err := c.ControlsJSON()
	if err != nil || !strings.Contains(string(raw), `"control_id":1`) {
		t.Errorf("ControlsJSON = %s, %v", raw, err)
	}
}

func TestLoadRejectsMalformedCorpus(t *testing.T) {
	tests := map[string]string{
		"duplicate name":     strings.Replace(goodFile, "bad pattern", "ssn is denied", 1),
		"unknown field":      strings.Replace(goodFile, "stage: pre\n    want:\n      decision", "stage: pre\n    wnat: {}\n    want:\n      decision", 1),
		"bad decision":       strings.Replace(goodFile, "decision: deny\n      matches", "decision: block\n      matches", 1),
		"invalid w/o probs":  strings.Replace(goodFile, "problems: [controls.0.condition]", "", 1),
		"bad execution":      strings.Replace(goodFile, "[server, sdk]", "[edge]", 1),
		"duplicate id":       strings.Replace(goodFile, "- {id: 2, name: bad, data: {}}", "- {id: 2, name: bad, data: {}}\n      - {id: 2, name: bad2, data: {}}", 1),
		"zero id":            strings.Replace(goodFile, "id: 2", "id: 0", 1),
		"no cases":           "cases: []\n",
		"boolean yaml key":   strings.Replace(goodFile, "input: \"my ssn is 123-45-6789\"", "input: {n: 1}", 1),
		"not yaml":           "cases: [\n",
		"duplicate yaml key": strings.Replace(goodFile, "stage: pre\n    want:\n      decision", "stage: pre\n    stage: post\n    want:\n      decision", 1),
	}
	for name, body := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "x.yaml", body)
			if _, err := Load(dir); err == nil {
				t.Error("Load accepted a malformed file")
			}
		})
	}
	if _, err := Load(t.TempDir()); err == nil {
		t.Error("Load accepted an empty directory")
	}
}

// TestCorpusLoads checks the real corpus: it parses, and it is big enough to cover the language.
func TestCorpusLoads(t *testing.T) {
	files, err := Load(filepath.Join("..", "..", "testdata", "cases"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		n += len(f.Cases)
	}
	if n < 90 {
		t.Errorf("corpus has %d cases, want at least 90", n)
	}
}

// TestNeedsCgoCasesOnlyWithCgo: a case marked needs_cgo is loaded by a build with cgo and left out of
// one without.
func TestNeedsCgoCasesOnlyWithCgo(t *testing.T) {
	dir := t.TempDir()
	cgoCase := strings.Replace(goodFile, "  - name: ssn is denied\n", "  - name: ssn is denied\n    needs_cgo: true\n", 1)
	write(t, dir, "a.yaml", cgoCase)
	f, err := LoadFile(filepath.Join(dir, "a.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var marked, others int
	for _, c := range f.Cases {
		if c.NeedsCgo {
			marked++
		} else {
			others++
		}
	}
	want := 0
	if withCgo {
		want = 1
	}
	if marked != want || others != 1 {
		t.Fatalf("%d needs_cgo cases (want %d, cgo %v), %d others (want 1)", marked, want, withCgo, others)
	}
}
