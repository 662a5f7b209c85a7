package templates

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"

	"sigs.k8s.io/yaml"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/internal/boundedread"
)

//go:embed library/*.yaml
var library embed.FS

var (
	shippedOnce sync.Once
	shipped     *Set
	shippedErr  error
)

// Shipped returns the library of templates guard ships (templates/library). The files are embedded at build
// time and checked by the package's tests, so a broken file is a build defect: Shipped panics on it.
func Shipped() *Set {
	shippedOnce.Do(func() { shipped, shippedErr = Load(library) })
	if shippedErr != nil {
		panic("templates: the shipped library does not load: " + shippedErr.Error())
	}
	return shipped
}

// MaxFileBytes caps one template file read by Load (the shipped ones are a few KiB); a larger file is
// refused with an error naming it and the cap, having read at most the cap.
const MaxFileBytes = 1 << 20

// Load reads every *.yaml file under the directory "library" of fsys (or at its top level when it has no
// such directory) as a template and checks it (see Parse). Template names must be unique. Each file is
// read under MaxFileBytes.
func Load(fsys fs.FS) (*Set, error) {
	dir := "library"
	if _, err := fs.Stat(fsys, dir); err != nil {
		dir = "."
	}
	files, err := fs.Glob(fsys, path.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	set := &Set{byName: map[string]*Template{}}
	for _, f := range files {
		raw, err := boundedread.FSFile(fsys, f, "template file", MaxFileBytes)
		if err != nil {
			return nil, err
		}
		t, err := Parse(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if _, dup := set.byName[t.Name]; dup {
			return nil, fmt.Errorf("%s: template %q is defined twice", f, t.Name)
		}
		set.byName[t.Name] = t
		set.names = append(set.names, t.Name)
	}
	sort.Strings(set.names)
	return set, nil
}

// fileFormat is a template file: the Template fields, strictly (an unknown key is an error).
type fileFormat struct {
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Category    string          `json:"category"`
	Parameters  []Parameter     `json:"parameters"`
	Data        json.RawMessage `json:"data"`
}

// placeholder is "{{name}}" with optional spaces inside the braces.
var placeholder = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

// paramName is the rule for parameter names: they appear in --set flags and in problem paths.
var paramName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// Parse reads one template file (YAML or JSON) and checks it: the name is a valid control name; title,
// description, category and data are present; parameters have unique names, known types, defaults and
// examples of their type, values for enums; every placeholder names a parameter and every parameter is
// used; list and boolean parameters are used only as whole values, optional ones without a default too.
// Whether the template renders to valid control data is checked by rendering it (the package's tests
// render every shipped template).
func Parse(raw []byte) (*Template, error) {
	js, err := yaml.YAMLToJSONStrict(raw) // strict: a duplicate key is an error
	if err != nil {
		return nil, err
	}
	var f fileFormat
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if err := guard.ValidateControlName(f.Name); err != nil {
		return nil, fmt.Errorf("name: %w", err)
	}
	for field, v := range map[string]string{"title": f.Title, "description": f.Description, "category": f.Category} {
		if strings.TrimSpace(v) == "" {
			return nil, fmt.Errorf("%s is required", field)
		}
	}
	if len(bytes.TrimSpace(f.Data)) == 0 || string(bytes.TrimSpace(f.Data)) == "null" {
		return nil, fmt.Errorf("data is required")
	}
	t := &Template{Name: f.Name, Title: f.Title, Description: f.Description, Category: f.Category, Parameters: f.Parameters, Data: f.Data}
	if t.Parameters == nil {
		t.Parameters = []Parameter{}
	}
	seen := map[string]bool{}
	for i := range t.Parameters {
		p := &t.Parameters[i]
		if err := p.check(); err != nil {
			return nil, fmt.Errorf("parameters.%d (%s): %w", i, p.Name, err)
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("parameters.%d: %q appears twice", i, p.Name)
		}
		seen[p.Name] = true
	}
	dec = json.NewDecoder(bytes.NewReader(f.Data))
	dec.UseNumber()
	if err := dec.Decode(&t.tree); err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	used := map[string]bool{}
	if err := t.checkPlaceholders(t.tree, "data", used); err != nil {
		return nil, err
	}
	for _, p := range t.Parameters {
		if !used[p.Name] {
			return nil, fmt.Errorf("parameter %q is not used in data", p.Name)
		}
	}
	t.evaluators = evaluatorNames(t.tree)
	for _, e := range t.evaluators {
		if placeholder.MatchString(e) {
			// The evaluators decide where a template can render (Set.Available): they must be fixed.
			return nil, fmt.Errorf("an evaluator name cannot be a parameter")
		}
	}
	return t, nil
}

// check checks a parameter's declaration.
func (p *Parameter) check() error {
	if !paramName.MatchString(p.Name) {
		return fmt.Errorf("name must be 1-64 of a-z, 0-9 and _, starting with a letter")
	}
	if strings.TrimSpace(p.Description) == "" {
		return fmt.Errorf("description is required")
	}
	switch p.Type {
	case TypeString, TypeStringList, TypeBoolean, TypeRegex, TypeNumber:
	case TypeEnum:
		if len(p.Values) == 0 {
			return fmt.Errorf("an enum needs values")
		}
	default:
		return fmt.Errorf("unknown type %q", p.Type)
	}
	if len(p.Values) > 0 && p.Type != TypeEnum && p.Type != TypeStringList {
		return fmt.Errorf("values apply to enum and string_list parameters only")
	}
	if (p.Minimum != nil || p.Maximum != nil) && p.Type != TypeNumber {
		return fmt.Errorf("minimum and maximum apply to number parameters only")
	}
	if p.Required && p.Default != nil {
		return fmt.Errorf("a required parameter has no default")
	}
	if p.Required && p.Example == nil {
		return fmt.Errorf("a required parameter needs an example")
	}
	for what, v := range map[string]any{"default": p.Default, "example": p.Example} {
		if v == nil {
			continue
		}
		norm, probs := p.accept(v, nil)
		if len(probs) > 0 {
			return fmt.Errorf("%s: %s", what, probs[0].Message)
		}
		if what == "default" {
			p.Default = norm
		} else {
			p.Example = norm
		}
	}
	return nil
}

// checkPlaceholders walks the data tree and checks every placeholder against the parameters.
func (t *Template) checkPlaceholders(v any, at string, used map[string]bool) error {
	inString := func(s, where string) error {
		for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
			p, ok := t.Parameter(m[1])
			if !ok {
				return fmt.Errorf("%s: placeholder {{%s}} names no parameter", where, m[1])
			}
			used[p.Name] = true
			whole := strings.TrimSpace(m[0]) == s
			if whole && !strings.HasPrefix(where, "key ") {
				continue
			}
			switch {
			case p.Type == TypeStringList || p.Type == TypeBoolean:
				return fmt.Errorf("%s: a %s parameter can only be a whole value", where, p.Type)
			case !p.Required && p.Default == nil:
				return fmt.Errorf("%s: an optional parameter without a default can only be a whole value", where)
			}
		}
		return nil
	}
	switch x := v.(type) {
	case string:
		return inString(x, at)
	case map[string]any:
		for k, item := range x {
			if err := inString(k, "key "+at+"."+k); err != nil {
				return err
			}
			if err := t.checkPlaceholders(item, at+"."+k, used); err != nil {
				return err
			}
		}
	case []any:
		for i, item := range x {
			if err := t.checkPlaceholders(item, fmt.Sprintf("%s.%d", at, i), used); err != nil {
				return err
			}
		}
	}
	return nil
}

// evaluatorNames collects the names of the evaluators in a control data tree: every "evaluator" object's
// "name" inside "condition" (and the legacy top-level "evaluator").
func evaluatorNames(tree any) []string {
	set := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ev, ok := x["evaluator"].(map[string]any); ok {
				if n, ok := ev["name"].(string); ok {
					set[n] = true
				}
			}
			for k, item := range x {
				if k != "tests" {
					walk(item)
				}
			}
		case []any:
			for _, item := range x {
				walk(item)
			}
		}
	}
	walk(tree)
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
