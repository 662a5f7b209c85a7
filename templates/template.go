package templates

import (
	"encoding/json"
	"sort"
)

// Type is the type of a template parameter. The type decides which JSON values a caller may give and what
// the value becomes in the rendered control data.
type Type string

// The parameter types.
const (
	// TypeString is a non-blank JSON string. It renders as a JSON string, also inside a longer string.
	TypeString Type = "string"
	// TypeStringList is a non-empty JSON list of non-blank strings (each one of Values, when the parameter
	// has Values). It renders as a JSON list and only as a whole value.
	TypeStringList Type = "string_list"
	// TypeEnum is a JSON string that is one of Values.
	TypeEnum Type = "enum"
	// TypeBoolean is true or false; it renders as a JSON boolean.
	TypeBoolean Type = "boolean"
	// TypeRegex is a JSON string that compiles under the regex evaluator's rules (RE2, or the backtracking
	// engine for look-around and back-references). It renders as a JSON string.
	TypeRegex Type = "regex"
	// TypeNumber is a finite JSON number within Minimum and Maximum; it renders as a JSON number.
	TypeNumber Type = "number"
)

// Parameter describes one parameter of a template: its name (a placeholder "{{name}}" in the template's
// data), its type and what a caller may give.
type Parameter struct {
	Name        string `json:"name"`
	Type        Type   `json:"type"`
	Description string `json:"description"`
	// Required parameters have no default: a render without them is a problem.
	Required bool `json:"required"`
	// Default is used when the caller does not give the parameter. An optional parameter without a default
	// drops the object key (or list item) whose whole value is its placeholder.
	Default any `json:"default,omitempty"`
	// Example is a value for a required parameter, used by the documentation, the dashboard's form and the
	// tests that render every template.
	Example any `json:"example,omitempty"`
	// Values are the allowed values of an enum, or of each item of a string list.
	Values []string `json:"values,omitempty"`
	// Minimum and Maximum bound a number.
	Minimum *float64 `json:"minimum,omitempty"`
	Maximum *float64 `json:"maximum,omitempty"`
}

// Template is a parameterized control.
type Template struct {
	Name        string      `json:"name"`
	Title       string      `json:"title"`
	Description string      `json:"description"`
	Category    string      `json:"category"`
	Parameters  []Parameter `json:"parameters"`
	// Data is control data with placeholders, as in the template file (JSON).
	Data json.RawMessage `json:"data"`

	tree       any      // Data decoded, numbers as json.Number
	evaluators []string // evaluator names the data uses, sorted
}

// Evaluators lists the evaluators the template's control uses, sorted. A program whose registry lacks one
// of them cannot render the template (Set.Available leaves it out).
func (t *Template) Evaluators() []string { return append([]string(nil), t.evaluators...) }

// Parameter returns the parameter named name.
func (t *Template) Parameter(name string) (*Parameter, bool) {
	for i := range t.Parameters {
		if t.Parameters[i].Name == name {
			return &t.Parameters[i], true
		}
	}
	return nil, false
}

// Set is a collection of templates by name.
type Set struct {
	byName map[string]*Template
	names  []string
}

// Get returns the template named name.
func (s *Set) Get(name string) (*Template, bool) {
	t, ok := s.byName[name]
	return t, ok
}

// List returns every template, sorted by category and then by name.
func (s *Set) List() []*Template {
	out := make([]*Template, 0, len(s.names))
	for _, n := range s.names {
		out = append(out, s.byName[n])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Category < out[j].Category })
	return out
}

// Available returns the templates whose evaluators are all registered, as List orders them. has reports
// whether an evaluator name is registered (for example a registry's Lookup).
func (s *Set) Available(has func(evaluator string) bool) []*Template {
	var out []*Template
	for _, t := range s.List() {
		ok := true
		for _, e := range t.evaluators {
			if !has(e) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, t)
		}
	}
	return out
}
