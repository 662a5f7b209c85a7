// Package cases loads the decision corpus of testdata/cases: YAML files of controls, a step, a stage and
// the expected result. The engine tests, the server tests and the fuzz seeds all read it, so every layer
// agrees on what a control means.
//
// A file looks like this (YAML is converted to JSON first, so JSON field names apply):
//
//	cases:
//	  - name: ssn in input is denied        # unique within the file
//	    execution: [server]                   # optional: executions the engine evaluates (default [server])
//	    controls:
//	      - id: 1
//	        name: block-ssn
//	        data: {scope: {stages: [pre]}, condition: {...}, action: {decision: deny}}
//	    step: {type: llm, name: chat, input: "my ssn is 123-45-6789"}
//	    stage: pre
//	    want:
//	      decision: deny                      # allow | deny | steer
//	      matches: [block-ssn]                # control names in result.matches (any order)
//	      errors: []                          # control names in result.errors
//	      non_matches: []                     # optional: control names in result.non_matches
//	      steering_message: ""                # optional
//	      confidence: 1.0                     # optional
//	      invalid: false                      # optional: Engine.Update must fail...
//	      problems: []                        # ...with these field paths ("controls.0.condition")
//	      may_skip: []                        # optional: controls the engine may skip after a deny
//	      eval_error: false                   # optional: Evaluate must fail (malformed step or stage)
//	      redacted: {output: "..."}           # optional: result.redacted (null: none expected)
//
// Beware of YAML 1.1 scalars in control data: unquoted yes, no, on, off, y and n are booleans, and
// numbers stay numbers; quote them when a string is meant.
package cases

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// File is one YAML file of the corpus.
type File struct {
	// Name is the file name without directory and .yaml extension ("scope").
	Name string
	// Path is the path the file was read from.
	Path  string
	Cases []Case
}

// Case is one decision case.
type Case struct {
	Name string `json:"name"`
	// Execution lists the executions the engine evaluates ("server", "sdk"); nil means server only.
	Execution []string  `json:"execution,omitempty"`
	Controls  []Control `json:"controls"`
	// Step is the step as JSON: {type, name, input, output, context}.
	Step json.RawMessage `json:"step"`
	// Stage is "pre" or "post" (deliberately unchecked so a case can use an invalid stage).
	Stage string `json:"stage"`
	Want  Want   `json:"want"`
	// NeedsCgo marks a case that needs what only a build with cgo has (the sql evaluator's postgres
	// dialect): LoadFile leaves it out of a build without cgo.
	NeedsCgo bool `json:"needs_cgo,omitempty"`
}

// Control is a control of a case, its data kept as raw JSON so callers decide how to parse it.
type Control struct {
	ID   int64           `json:"id"`
	Name string          `json:"name"`
	Data json.RawMessage `json:"data"`
}

// Want is the expected result of a case.
type Want struct {
	// Decision is allow, deny or steer (empty when Invalid).
	Decision string `json:"decision,omitempty"`
	// Matches, Errors: control names expected in result.matches and result.errors, in any order.
	Matches []string `json:"matches,omitempty"`
	Errors  []string `json:"errors,omitempty"`
	// NonMatches, when not nil, are the control names expected in result.non_matches.
	NonMatches *[]string `json:"non_matches,omitempty"`
	// SteeringMessage, when not nil, is the expected steering_context.message.
	SteeringMessage *string `json:"steering_message,omitempty"`
	// Confidence, when not nil, is the expected result confidence.
	Confidence *float64 `json:"confidence,omitempty"`
	// Invalid says Engine.Update must fail; Problems then lists the expected field paths (any order).
	Invalid  bool     `json:"invalid,omitempty"`
	Problems []string `json:"problems,omitempty"`
	// MaySkip names controls the engine may skip once a deny matched: they are left out of every list
	// comparison.
	MaySkip []string `json:"may_skip,omitempty"`
	// EvalError says Evaluate must fail (a malformed step or stage): no decision is expected.
	EvalError bool `json:"eval_error,omitempty"`
	// Redacted, when present, is the expected result.redacted ({input} or {output}); null expects none.
	Redacted json.RawMessage `json:"redacted,omitempty"`
}

// SameRedacted reports whether got (the JSON of result.redacted, "null" or empty when absent) is what
// the case expects; it is true when the case expects nothing in particular.
func (w *Want) SameRedacted(got []byte) (bool, error) {
	if len(w.Redacted) == 0 {
		return true, nil
	}
	var want, have any
	if err := json.Unmarshal(w.Redacted, &want); err != nil {
		return false, err
	}
	if len(got) > 0 {
		if err := json.Unmarshal(got, &have); err != nil {
			return false, err
		}
	}
	return reflect.DeepEqual(want, have), nil
}

type fileDoc struct {
	Cases []Case `json:"cases"`
}

// Load reads every *.yaml file of dir, sorted by name, and checks that each case is well formed.
func Load(dir string) ([]File, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	if len(paths) == 0 {
		return nil, fmt.Errorf("cases: no *.yaml files in %s", dir)
	}
	files := make([]File, 0, len(paths))
	for _, p := range paths {
		f, err := LoadFile(p)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// LoadFile reads one YAML file of cases and checks it.
func LoadFile(path string) (File, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return File{}, err
	}
	var doc fileDoc
	if err := yaml.UnmarshalStrict(raw, &doc); err != nil {
		return File{}, fmt.Errorf("cases: %s: %w", path, err)
	}
	f := File{Name: strings.TrimSuffix(filepath.Base(path), ".yaml"), Path: path, Cases: doc.Cases}
	if len(f.Cases) == 0 {
		return File{}, fmt.Errorf("cases: %s: no cases", path)
	}
	if !withCgo {
		kept := f.Cases[:0]
		for _, c := range f.Cases {
			if !c.NeedsCgo {
				kept = append(kept, c)
			}
		}
		f.Cases = kept
	}
	seen := make(map[string]bool, len(f.Cases))
	for i := range f.Cases {
		c := &f.Cases[i]
		if seen[c.Name] {
			return File{}, fmt.Errorf("cases: %s: duplicate case name %q", path, c.Name)
		}
		seen[c.Name] = true
		if err := c.check(); err != nil {
			return File{}, fmt.Errorf("cases: %s: case %d (%q): %w", path, i, c.Name, err)
		}
	}
	return f, nil
}

// check reports a malformed case: a mistake in the corpus, not in the code under test.
func (c *Case) check() error {
	if strings.TrimSpace(c.Name) == "" {
		return fmt.Errorf("name is required")
	}
	for _, e := range c.Execution {
		if e != "server" && e != "sdk" {
			return fmt.Errorf("execution %q is not server or sdk", e)
		}
	}
	ids := make(map[int64]bool, len(c.Controls))
	for i, ctl := range c.Controls {
		if ctl.ID <= 0 || ids[ctl.ID] {
			return fmt.Errorf("control %d: id must be a positive integer unique in the case", i)
		}
		ids[ctl.ID] = true
		if ctl.Name == "" {
			return fmt.Errorf("control %d: name is required", i)
		}
		if len(ctl.Data) == 0 {
			return fmt.Errorf("control %d: data is required", i)
		}
		if err := checkKeys(ctl.Data); err != nil {
			return fmt.Errorf("control %d: %w", i, err)
		}
	}
	if err := checkKeys(c.Step); err != nil {
		return fmt.Errorf("step: %w", err)
	}
	if c.Want.Invalid {
		if len(c.Want.Problems) == 0 {
			return fmt.Errorf("an invalid case must list the expected problems")
		}
		if c.Want.Decision != "" || c.Want.Matches != nil || c.Want.Errors != nil {
			return fmt.Errorf("an invalid case expects no decision, matches or errors")
		}
		return nil
	}
	if len(c.Want.Problems) > 0 {
		return fmt.Errorf("problems are only for invalid cases")
	}
	if c.Want.EvalError {
		if c.Want.Decision != "" || c.Want.Matches != nil || c.Want.Errors != nil {
			return fmt.Errorf("an eval_error case expects no decision, matches or errors")
		}
		return nil
	}
	switch c.Want.Decision {
	case "allow", "deny", "steer":
	default:
		return fmt.Errorf("want.decision must be allow, deny or steer")
	}
	if len(c.Step) == 0 || string(c.Step) == "null" {
		return fmt.Errorf("step is required")
	}
	if c.Want.SteeringMessage != nil && c.Want.Decision != "steer" {
		return fmt.Errorf("steering_message only goes with decision steer")
	}
	return nil
}

// Executions returns the case's executions, defaulting to server.
func (c *Case) Executions() []string {
	if len(c.Execution) == 0 {
		return []string{"server"}
	}
	return c.Execution
}

// ControlsJSON returns the case's controls as a JSON array of {control_id, name, data}, the wire form of
// a control list.
func (c *Case) ControlsJSON() ([]byte, error) {
	type wire struct {
		ID   int64           `json:"control_id"`
		Name string          `json:"name"`
		Data json.RawMessage `json:"data"`
	}
	out := make([]wire, len(c.Controls))
	for i, ctl := range c.Controls {
		out[i] = wire(ctl)
	}
	return json.Marshal(out)
}

// checkKeys rejects object keys "true" and "false" in raw JSON: they come from unquoted YAML 1.1 keys such
// as n, y, on or off, which YAML reads as booleans, and are never what a case author meant.
func checkKeys(raw json.RawMessage) error {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	stack := []any{v}
	for len(stack) > 0 {
		v, stack = stack[len(stack)-1], stack[:len(stack)-1]
		switch x := v.(type) {
		case map[string]any:
			for k, item := range x {
				if k == "true" || k == "false" {
					return fmt.Errorf("object key %q: quote YAML keys such as n, y, on, off", k)
				}
				stack = append(stack, item)
			}
		case []any:
			stack = append(stack, x...)
		}
	}
	return nil
}
