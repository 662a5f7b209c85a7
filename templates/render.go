package templates

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/evaluator"
)

// Option configures Render.
type Option func(*options)

type options struct {
	registry *evaluator.Registry
}

// WithRegistry renders against r instead of evaluator.Default: regex parameters compile with r's regex
// evaluator, the rendered data is validated with r's evaluators and the tests run with them.
func WithRegistry(r *evaluator.Registry) Option {
	return func(o *options) { o.registry = r }
}

// Rendered is the outcome of a render.
type Rendered struct {
	// Data is valid control data, normalised as guard.ParseControlData returns it, ready for
	// PUT /controls or a policy file. Its tests are those of the template that pass with the parameters.
	Data guard.ControlData
	// OmittedTests lists the template's tests that do not pass with the parameters given (for example a
	// test of a tool the caller's allow-list now allows): they are left out of Data, so that the server,
	// which runs a control's tests on save, accepts it.
	OmittedTests []OmittedTest
}

// OmittedTest is a template test left out of a render, with what it expected and what the control decided.
type OmittedTest struct {
	Name    string `json:"name"`
	Message string `json:"message"`
}

// ParameterField is the problem path of a parameter: parameters.<name>.
func ParameterField(name string) string { return "parameters." + name }

// Render substitutes params into the template's data and returns valid control data.
//
// params maps parameter names to values as encoding/json decodes them (string, []any of strings, bool,
// float64 or json.Number). Every problem is reported at once in a *guard.ValidationError, each at
// parameters.<name>: a name the template does not have (unknown_field), a required one missing (required),
// a value of the wrong type (type), not one of the allowed values (enum), an empty string or list (required,
// empty), a regex that does not compile (invalid_regex), a number out of range (minimum, maximum), and any
// problem the control language finds in a value once substituted (with the code it reports). A problem of
// the rendered data that no parameter caused is reported at data.<path> (a defect of the template).
//
// The template's tests are run with the engine's runner (guard.RunControlTests, under ctx); those that do
// not pass with params are left out of the data and listed in OmittedTests.
func (t *Template) Render(ctx context.Context, params map[string]any, opts ...Option) (*Rendered, error) {
	o := options{registry: evaluator.Default}
	for _, opt := range opts {
		opt(&o)
	}
	if o.registry == nil {
		o.registry = evaluator.Default
	}
	values, probs := t.values(params, o.registry)
	if len(probs) > 0 {
		return nil, &guard.ValidationError{Problems: probs}
	}
	s := substituter{values: values, origins: map[string][]string{}}
	tree, _ := s.value(t.tree, "")
	raw, err := json.Marshal(tree)
	if err != nil {
		return nil, fmt.Errorf("templates: encode %s: %w", t.Name, err)
	}
	d, err := guard.ParseControlData(raw, guard.WithValidationRegistry(o.registry))
	if err != nil {
		var ve *guard.ValidationError
		if errors.As(err, &ve) {
			return nil, &guard.ValidationError{Problems: s.blame(ve.Problems)}
		}
		return nil, err
	}
	out := &Rendered{Data: d, OmittedTests: []OmittedTest{}}
	results, err := guard.RunControlTests(ctx, t.Name, d, guard.WithRegistry(o.registry))
	if err != nil {
		return nil, err
	}
	var kept []guard.TestCase
	for i, r := range results {
		if r.Passed {
			kept = append(kept, d.Tests[i])
			continue
		}
		out.OmittedTests = append(out.OmittedTests, OmittedTest{Name: r.Name,
			Message: fmt.Sprintf("expected %s; the control %s", d.Tests[i].Expect.String(), guard.Decided(r.Result))})
	}
	out.Data.Tests = kept
	return out, nil
}

// values checks params against the template's parameters and returns the value of each parameter that has
// one (given or default); a parameter absent from the map is omitted.
func (t *Template) values(params map[string]any, reg *evaluator.Registry) (map[string]any, []guard.Problem) {
	var probs []guard.Problem
	var unknown []string
	for name := range params {
		if _, ok := t.Parameter(name); !ok {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	for _, name := range unknown {
		probs = append(probs, guard.Problem{Field: ParameterField(name), Code: guard.CodeUnknownField,
			Message: "is not a parameter of this template"})
	}
	values := map[string]any{}
	for i := range t.Parameters {
		p := &t.Parameters[i]
		v, given := params[p.Name]
		if !given || v == nil {
			switch {
			case p.Required:
				probs = append(probs, guard.Problem{Field: ParameterField(p.Name), Code: guard.CodeRequired, Message: "is required"})
			case p.Default != nil:
				values[p.Name] = p.Default
			}
			continue
		}
		norm, ps := p.accept(v, reg)
		for _, pr := range ps {
			pr.Field = ParameterField(p.Name)
			probs = append(probs, pr)
		}
		if len(ps) == 0 {
			values[p.Name] = norm
		}
	}
	return values, probs
}

// substituter builds the rendered tree and remembers which parameters produced which paths, so that a
// problem of the rendered data can be blamed on the parameter that caused it.
type substituter struct {
	values  map[string]any
	origins map[string][]string // data path -> parameters substituted there
}

func join(base, seg string) string {
	if base == "" {
		return seg
	}
	return base + "." + seg
}

// value returns v with placeholders substituted; keep is false when v is left out: the placeholder of an
// omitted parameter, or an object or list that omitted parameters emptied.
func (s *substituter) value(v any, at string) (out any, keep bool) {
	out, keep, _ = s.subst(v, at)
	return out, keep
}

// subst is value, also reporting whether v is an object that lost a key to an omitted parameter
// (partial). An object in a list that lost one of its own keys this way is left out whole (a {label,
// steps} entry without its steps means nothing), and an object or list that omissions left empty is left
// out in turn: so a list of entries whose parameters are all omitted disappears with its key, instead of
// rendering as invalid data.
func (s *substituter) subst(v any, at string) (out any, keep, partial bool) {
	switch x := v.(type) {
	case string:
		if m := placeholder.FindStringSubmatch(x); m != nil && strings.TrimSpace(m[0]) == x {
			val, ok := s.values[m[1]]
			if !ok {
				return nil, false, false
			}
			s.origins[at] = append(s.origins[at], m[1])
			return val, true, false
		}
		return s.text(x, at), true, false
	case map[string]any:
		obj := make(map[string]any, len(x))
		dropped := false
		for k, item := range x {
			key := k
			if placeholder.MatchString(k) {
				key = s.text(k, "")
				for _, m := range placeholder.FindAllStringSubmatch(k, -1) {
					s.origins[join(at, key)] = append(s.origins[join(at, key)], m[1])
				}
			}
			if val, ok, _ := s.subst(item, join(at, key)); ok {
				obj[key] = val
			} else {
				dropped = true
			}
		}
		if dropped && len(obj) == 0 {
			return nil, false, true
		}
		return obj, true, dropped
	case []any:
		list := make([]any, 0, len(x))
		dropped := false
		for _, item := range x {
			val, ok, part := s.subst(item, fmt.Sprintf("%s.%d", at, len(list)))
			if !ok || part {
				dropped = true
				continue
			}
			list = append(list, val)
		}
		if dropped && len(list) == 0 {
			return nil, false, false
		}
		return list, true, false
	}
	return v, true, false
}

// text replaces the placeholders inside a longer string with their values as text (Parse allows only
// scalar parameters that always have a value there); at, when not empty, records the origins.
func (s *substituter) text(str, at string) string {
	return placeholder.ReplaceAllStringFunc(str, func(m string) string {
		name := placeholder.FindStringSubmatch(m)[1]
		if at != "" {
			s.origins[at] = append(s.origins[at], name)
		}
		switch v := s.values[name].(type) {
		case string:
			return v
		case json.Number:
			return v.String()
		}
		return fmt.Sprint(s.values[name])
	})
}

// blame turns problems of the rendered data into problems of the parameters whose values are at (or above)
// the problem's path; the others are reported at data.<path>.
func (s *substituter) blame(probs []guard.Problem) []guard.Problem {
	var out []guard.Problem
	seen := map[string]bool{}
	add := func(p guard.Problem) {
		k := p.Field + "\x00" + p.Code
		if !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	for _, p := range probs {
		names := s.originOf(p.Field)
		if len(names) == 0 {
			p.Field = join("data", p.Field)
			add(p)
			continue
		}
		for _, n := range names {
			add(guard.Problem{Field: ParameterField(n), Code: p.Code, Message: p.Message})
		}
	}
	return out
}

// originOf finds the parameters substituted at field or at the nearest path above it.
func (s *substituter) originOf(field string) []string {
	for f := field; ; {
		if names, ok := s.origins[f]; ok {
			return names
		}
		i := strings.LastIndexByte(f, '.')
		if i < 0 {
			return nil
		}
		f = f[:i]
	}
}
