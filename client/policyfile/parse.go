package policyfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v2"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/evaluator"
	"github.com/guardrail-control/guard/internal/strictjson"
)

// Options says how control data is validated.
type Options struct {
	// Registry holds the evaluators whose configs are checked; nil means evaluator.Default.
	Registry *evaluator.Registry
	// AllowUnknownEvaluators accepts evaluator names Registry does not have (the client library runs such
	// controls with their on_error). The guard binary is strict, like the server.
	AllowUnknownEvaluators bool
}

// Load reads policy files and checks them together: a control name is defined once across all of them,
// and agents and tests name controls that are defined. The error is an *Error with every problem of
// every file, or the error of a file that cannot be read (a *TooLargeError past MaxFileBytes).
func Load(paths []string, opts Options) (*Policy, error) {
	srcs := make([]Source, 0, len(paths))
	for _, path := range paths {
		raw, err := ReadFile(path)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, Source{Name: path, Data: raw})
	}
	return LoadSources(srcs, opts)
}

// Source is the content of one policy file and the name messages give it (a path, "<stdin>").
type Source struct {
	Name string
	Data []byte
}

// LoadSources is Load for contents already read.
func LoadSources(srcs []Source, opts Options) (*Policy, error) {
	var parts []*Policy
	var probs []Problem
	for _, src := range srcs {
		p, ps := parse(src.Name, src.Data, opts)
		parts = append(parts, p)
		probs = append(probs, ps...)
	}
	pol, ps := merge(parts)
	probs = append(probs, ps...)
	if len(probs) > 0 {
		return nil, &Error{Problems: probs}
	}
	return pol, nil
}

// Parse reads one policy file held in raw (file names it in messages) and checks it alone, as Load does.
func Parse(file string, raw []byte, opts Options) (*Policy, error) {
	p, probs := parse(file, raw, opts)
	pol, ps := merge([]*Policy{p})
	probs = append(probs, ps...)
	if len(probs) > 0 {
		return nil, &Error{Problems: probs}
	}
	return pol, nil
}

// documents splits raw into JSON documents: a file that starts with { is one JSON document, anything else
// is YAML with any number of `---` documents (empty ones are skipped). Duplicate keys are errors.
func documents(raw []byte) ([]json.RawMessage, error) {
	t := bytes.TrimSpace(raw)
	if len(t) > 0 && t[0] == '{' {
		if err := strictjson.Check(t); err != nil { // invalid, or a key repeated within one object
			return nil, fmt.Errorf("not valid JSON: %w", err)
		}
		return []json.RawMessage{t}, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.SetStrict(true) // duplicate keys are errors
	var docs []json.RawMessage
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("not valid YAML: %s", yamlMessage(err))
		}
		if v == nil {
			continue
		}
		jv, err := jsonValue(v, "")
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(jv)
		if err != nil {
			return nil, fmt.Errorf("not representable as JSON: %w", err)
		}
		docs = append(docs, b)
	}
}

// yamlMessage puts a YAML error on one line without the package's prefixes.
func yamlMessage(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n")
	fields := strings.Fields(msg)
	return strings.Join(fields, " ")
}

// jsonValue turns what the YAML decoder produced into JSON values: mappings need string keys.
func jsonValue(v any, path string) (any, error) {
	switch x := v.(type) {
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			ks, ok := k.(string)
			if !ok {
				// YAML reads on/off/yes/no and numbers as keys of other types; JSON keys are strings.
				return nil, fmt.Errorf("%s: key %v is not a string (quote it)", orTop(path), k)
			}
			jv, err := jsonValue(e, join(path, ks))
			if err != nil {
				return nil, err
			}
			out[ks] = jv
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			jv, err := jsonValue(e, join(path, strconv.Itoa(i)))
			if err != nil {
				return nil, err
			}
			out[i] = jv
		}
		return out, nil
	default:
		return x, nil
	}
}

func orTop(path string) string {
	if path == "" {
		return "(top level)"
	}
	return path
}

func join(base, seg string) string {
	if base == "" {
		return seg
	}
	return base + "." + seg
}

// parse reads one file; the policy holds every entry that could be read (an invalid control keeps its
// name, so references to it are not reported again).
func parse(file string, raw []byte, opts Options) (*Policy, []Problem) {
	pol := &Policy{}
	docs, err := documents(raw)
	if err != nil {
		return pol, []Problem{{File: file, Message: err.Error()}}
	}
	if len(docs) == 0 {
		return pol, []Problem{{File: file, Message: "holds no document: expected controls, agents and/or tests"}}
	}
	var probs []Problem
	for i, doc := range docs {
		where := file
		if len(docs) > 1 {
			where = fmt.Sprintf("%s (document %d)", file, i+1)
		}
		d := docParser{file: where, opts: opts, pol: pol}
		d.document(doc)
		probs = append(probs, d.probs...)
	}
	return pol, probs
}

// docParser reads one document into pol, collecting problems.
type docParser struct {
	file  string
	opts  Options
	pol   *Policy
	probs []Problem
}

func (d *docParser) add(control, field, msg string) {
	d.probs = append(d.probs, Problem{File: d.file, Control: control, Field: field, Message: msg})
}

// object decodes raw as an object whose keys are all in known; unknown keys are problems, in sorted order.
func (d *docParser) object(raw json.RawMessage, control, path string, known ...string) (map[string]json.RawMessage, bool) {
	var obj map[string]json.RawMessage
	if err := strictjson.Unmarshal(raw, &obj); err != nil || obj == nil {
		d.add(control, orTop(path), "must be an object")
		return nil, false
	}
	var unknown []string
	for k := range obj {
		if !contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		d.add(control, join(path, k), fmt.Sprintf("unknown field (expected one of %v)", known))
	}
	return obj, true
}

func (d *docParser) list(raw json.RawMessage, path string) ([]json.RawMessage, bool) {
	var l []json.RawMessage
	if err := strictjson.Unmarshal(raw, &l); err != nil {
		d.add("", path, "must be a list")
		return nil, false
	}
	return l, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

func (d *docParser) document(raw json.RawMessage) {
	top, ok := d.object(raw, "", "", "controls", "agents", "tests")
	if !ok {
		return
	}
	if v, ok := top["controls"]; ok && !isNull(v) {
		if l, ok := d.list(v, "controls"); ok {
			for i, e := range l {
				d.control(e, "controls."+strconv.Itoa(i))
			}
		}
	}
	if v, ok := top["agents"]; ok && !isNull(v) {
		if l, ok := d.list(v, "agents"); ok {
			for i, e := range l {
				d.agent(e, "agents."+strconv.Itoa(i))
			}
		}
	}
	if v, ok := top["tests"]; ok && !isNull(v) {
		if l, ok := d.list(v, "tests"); ok {
			for i, e := range l {
				d.test(e, "tests."+strconv.Itoa(i))
			}
		}
	}
}

func (d *docParser) control(raw json.RawMessage, at string) {
	obj, ok := d.object(raw, "", at, "id", "name", "data")
	if !ok {
		return
	}
	var c Control
	c.File = d.file
	// A bad name is one problem among the others of the control: the rest is still checked, so that a
	// file's every problem is reported at once. Such a control is not kept (nothing can refer to it).
	label, keep := "", true
	if err := strictjson.Unmarshal(obj["name"], &c.Name); err != nil || isNull(obj["name"]) {
		d.add("", at+".name", "is required and must be a string")
		keep = false
	} else if err := guard.ValidateControlName(c.Name); err != nil {
		d.add("", at+".name", err.Error())
		keep = false
	} else {
		label = c.Name
	}
	if v, ok := obj["id"]; ok && !isNull(v) {
		if err := strictjson.Unmarshal(v, &c.ID); err != nil || c.ID <= 0 {
			d.add(label, at+".id", "must be a positive integer")
		}
	}
	data, ok := obj["data"]
	if !ok || isNull(data) {
		d.add(label, at+".data", "is required")
		if keep {
			d.pol.Controls = append(d.pol.Controls, c)
		}
		return
	}
	vopts := []guard.ValidateOption{guard.WithValidationRegistry(d.registry())}
	if d.opts.AllowUnknownEvaluators {
		vopts = append(vopts, guard.AllowUnknownEvaluators())
	}
	cd, err := guard.ParseControlData(data, vopts...)
	if err != nil {
		var ve *guard.ValidationError
		if !errors.As(err, &ve) {
			d.add(label, at+".data", err.Error())
		} else {
			for _, p := range ve.WithPrefix(at + ".data").Problems {
				d.add(label, p.Field, p.Message)
			}
		}
	}
	c.Data = cd
	if keep {
		d.pol.Controls = append(d.pol.Controls, c)
	}
}

func (d *docParser) registry() *evaluator.Registry {
	if d.opts.Registry != nil {
		return d.opts.Registry
	}
	return evaluator.Default
}

func (d *docParser) agent(raw json.RawMessage, at string) {
	obj, ok := d.object(raw, "", at, "name", "controls")
	if !ok {
		return
	}
	var name string
	keep := true // a bad name is reported with the agent's other problems; the agent is not kept
	if err := strictjson.Unmarshal(obj["name"], &name); err != nil || isNull(obj["name"]) {
		d.add("", at+".name", "is required and must be a string")
		keep = false
	}
	norm, err := guard.NormalizeAgentName(name)
	if keep && err != nil {
		d.add("", at+".name", err.Error())
		keep = false
	}
	a := Agent{File: d.file, Name: norm, Controls: []string{}}
	if v, ok := obj["controls"]; ok && !isNull(v) {
		if err := strictjson.Unmarshal(v, &a.Controls); err != nil {
			d.add("", at+".controls", "must be a list of control names")
		}
	}
	seen := map[string]bool{}
	for i, n := range a.Controls {
		if seen[n] {
			d.add(n, at+".controls."+strconv.Itoa(i), "is listed twice")
		}
		seen[n] = true
	}
	if keep {
		d.pol.Agents = append(d.pol.Agents, a)
	}
}

func (d *docParser) test(raw json.RawMessage, at string) {
	before := len(d.probs)
	obj, ok := d.object(raw, "", at, "name", "control", "step", "stage", "expect")
	if !ok {
		return
	}
	if st, ok := obj["step"]; ok && !isNull(st) {
		d.object(st, "", at+".step", "type", "name", "input", "output", "context")
	}
	if ex, ok := obj["expect"]; ok {
		if t := bytes.TrimSpace(ex); len(t) > 0 && t[0] == '{' {
			d.object(ex, "", at+".expect", "decision", "matches", "no_matches")
		}
	}
	var tc guard.TestCase
	if err := strictjson.Unmarshal(raw, &tc); err != nil {
		var se *strictjson.Error
		if errors.As(err, &se) && (se.Kind == strictjson.KindType || se.Kind == strictjson.KindRange) {
			d.add("", join(at, se.Path), strings.TrimPrefix(err.Error(), se.Path+": "))
		} else if len(d.probs) == before { // not already reported as an unknown field
			d.add("", at, err.Error())
		}
		return
	}
	if err := guard.ValidateTestCases([]guard.TestCase{tc}, nil); err != nil {
		var ve *guard.ValidationError
		if errors.As(err, &ve) {
			for _, p := range ve.Problems {
				// ValidateTestCases numbers from tests.0: put the case's own position back.
				d.add("", at+p.Field[len("tests.0"):], p.Message)
			}
		}
		return
	}
	d.pol.Tests = append(d.pol.Tests, Test{File: d.file, TestCase: tc})
}

// merge joins the files' policies and checks what spans them: names defined once, references defined.
func merge(parts []*Policy) (*Policy, []Problem) {
	out := &Policy{}
	var probs []Problem
	controls := map[string]string{}
	agents := map[string]string{}
	tests := map[string]string{}
	for _, p := range parts {
		for _, c := range p.Controls {
			if first, dup := controls[c.Name]; dup {
				probs = append(probs, Problem{File: c.File, Control: c.Name, Message: "is defined twice (first in " + first + ")"})
				continue
			}
			controls[c.Name] = c.File
			out.Controls = append(out.Controls, c)
		}
		for _, a := range p.Agents {
			if first, dup := agents[a.Name]; dup {
				probs = append(probs, Problem{File: a.File, Message: fmt.Sprintf("agent %q is defined twice (first in %s)", a.Name, first)})
				continue
			}
			agents[a.Name] = a.File
			out.Agents = append(out.Agents, a)
		}
		for _, t := range p.Tests {
			if first, dup := tests[t.Name]; dup {
				probs = append(probs, Problem{File: t.File, Message: fmt.Sprintf("test %q is defined twice (first in %s)", t.Name, first)})
				continue
			}
			tests[t.Name] = t.File
			out.Tests = append(out.Tests, t)
		}
	}
	for _, a := range out.Agents {
		for _, n := range a.Controls {
			if _, ok := controls[n]; !ok {
				probs = append(probs, Problem{File: a.File, Control: n, Message: fmt.Sprintf("agent %q links a control no file defines", a.Name)})
			}
		}
	}
	for _, t := range out.Tests {
		names := append(append([]string{t.Control}, t.Expect.Matches...), t.Expect.NoMatches...)
		for _, n := range names {
			if _, ok := controls[n]; n != "" && !ok {
				probs = append(probs, Problem{File: t.File, Control: n, Message: fmt.Sprintf("test %q names a control no file defines", t.Name)})
			}
		}
	}
	return out, probs
}
