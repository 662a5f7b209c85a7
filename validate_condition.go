package guard

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/guardrail-control/guard/evaluator"
)

var conditionFields = []string{"selector", "evaluator", "and", "or", "not"}

// condition decodes one node of the condition tree at the given level (the root is level 1).
func (p *parser) condition(v any, path string, depth int) Condition {
	var c Condition
	if depth > MaxConditionDepth {
		p.add(path, CodeMaxDepth, fmt.Sprintf("condition tree must be at most %d levels deep", MaxConditionDepth))
		return c
	}
	obj, ok := p.object(v, path, conditionFields...)
	if !ok {
		return c
	}
	isLeaf := obj["selector"] != nil || obj["evaluator"] != nil
	shapes := 0
	for _, present := range []bool{isLeaf, obj["and"] != nil, obj["or"] != nil, obj["not"] != nil} {
		if present {
			shapes++
		}
	}
	if shapes != 1 {
		p.add(path, CodeShape, "must have exactly one of: selector and evaluator (a leaf), and, or, not")
		return c
	}
	switch {
	case isLeaf:
		p.leaves++
		return p.leaf(obj["selector"], obj["evaluator"], path)
	case obj["not"] != nil:
		child := p.condition(obj["not"], join(path, "not"), depth+1)
		c.Not = &child
	case obj["and"] != nil:
		c.And = p.conditionList(obj["and"], join(path, "and"), depth)
	default:
		c.Or = p.conditionList(obj["or"], join(path, "or"), depth)
	}
	return c
}

// conditionList decodes the operands of an and/or node at level depth.
func (p *parser) conditionList(v any, path string, depth int) []Condition {
	arr, ok := v.([]any)
	if !ok {
		p.add(path, CodeType, "must be a list of conditions")
		return nil
	}
	if len(arr) == 0 {
		p.add(path, CodeEmpty, "must not be empty")
		return nil
	}
	out := make([]Condition, len(arr))
	for i, item := range arr {
		out[i] = p.condition(item, join(path, fmt.Sprint(i)), depth+1)
	}
	return out
}

// leaf decodes a selector + evaluator leaf located at path ("" for the legacy top-level form).
func (p *parser) leaf(sel, ev any, path string) Condition {
	var c Condition
	sp := join(path, "selector")
	if sel == nil {
		p.add(sp, CodeRequired, "is required")
	} else {
		c.Selector = p.selector(sel, sp)
	}
	ep := join(path, "evaluator")
	if ev == nil {
		p.add(ep, CodeRequired, "is required")
	} else {
		c.Evaluator = p.evaluatorSpec(ev, ep)
	}
	return c
}

func (p *parser) selector(v any, path string) *Selector {
	obj, ok := p.object(v, path, "path", "window")
	if !ok {
		return nil
	}
	pp := join(path, "path")
	pv := obj["path"]
	if pv == nil {
		p.add(pp, CodeRequired, "is required")
		return &Selector{}
	}
	s, ok := p.str(pv, pp)
	if !ok {
		return &Selector{}
	}
	if msg := checkSelectorPath(s); msg != "" {
		p.add(pp, CodeInvalidPath, msg)
	}
	sel := &Selector{Path: s}
	p.selectorWindow(sel, obj["window"], join(path, "window"))
	return sel
}

// selectorRoots are the first segments a selector path may start with.
var selectorRoots = []string{"input", "output", "name", "type", "context"}

// checkSelectorPath returns why path is not a valid selector path, or "".
func checkSelectorPath(path string) string {
	if path == "" {
		return "must not be empty (use * for the whole step)"
	}
	if path == "*" {
		return ""
	}
	segs := strings.Split(path, ".")
	for _, s := range segs {
		if s == "" {
			return "must not have empty segments"
		}
		if s == "*" {
			return "* selects the whole step and must stand alone"
		}
	}
	if segs[0] == "session" || segs[0] == "agent" {
		return checkSessionPath(segs)
	}
	if !contains(selectorRoots, segs[0]) {
		return "must start with *, input, output, name, type, context, session or agent"
	}
	return ""
}

func (p *parser) evaluatorSpec(v any, path string) *EvaluatorSpec {
	obj, ok := p.object(v, path, "name", "config", "metadata")
	if !ok {
		return nil
	}
	spec := &EvaluatorSpec{Config: map[string]any{}}
	np := join(path, "name")
	nameOK := false
	if nv := obj["name"]; nv == nil {
		p.add(np, CodeRequired, "is required")
	} else if s, ok := p.str(nv, np); ok {
		spec.Name = s
		if s == "" {
			p.add(np, CodeRequired, "must not be empty")
		} else {
			nameOK = true
		}
	}
	cp := join(path, "config")
	configOK := true
	if cv := obj["config"]; cv != nil {
		m, ok := cv.(map[string]any)
		if !ok {
			p.add(cp, CodeType, "must be an object")
			configOK = false
		} else {
			spec.Config = m
		}
	}
	spec.Metadata = p.jsonObject(obj["metadata"], join(path, "metadata"))
	if nameOK && configOK && p.leaves <= MaxConditionLeaves {
		p.checkEvaluator(spec, np, cp)
	}
	return spec
}

// checkEvaluator asks the registry whether the evaluator exists and accepts the config, mapping each
// config problem to a field under cp.
func (p *parser) checkEvaluator(spec *EvaluatorSpec, np, cp string) {
	reg := p.cfg.registry
	if _, ok := reg.Lookup(spec.Name); !ok {
		if !p.cfg.allowUnknown {
			p.add(np, CodeUnknownEvaluator, "is not a registered evaluator")
		}
		return
	}
	if p.cfg.skipConfigs {
		return
	}
	err := reg.Validate(spec.Name, spec.Config)
	if err == nil {
		// Stored in the evaluator's one form (the json evaluator's two names for its schema, for
		// instance): what is saved reads back the same whichever accepted spelling the client used.
		spec.Config = reg.Canonical(spec.Name, spec.Config)
		return
	}
	var ce *evaluator.ConfigError
	switch {
	case errors.As(err, &ce):
		fes := append([]evaluator.FieldError(nil), ce.Problems...)
		sort.SliceStable(fes, func(i, j int) bool { return fes[i].Field < fes[j].Field })
		if len(fes) == 0 {
			p.add(cp, CodeInvalid, "is not a valid configuration for this evaluator")
		}
		for _, fe := range fes {
			code := fe.Code
			if code == "" {
				code = CodeInvalid
			}
			msg := fe.Message
			if msg == "" {
				msg = "is invalid"
			}
			field := cp // a problem about the config as a whole: no trailing "."
			if fe.Field != "" {
				field = join(cp, fe.Field)
			}
			p.add(field, code, msg)
		}
	case errors.Is(err, evaluator.ErrUnknownEvaluator):
		if !p.cfg.allowUnknown {
			p.add(np, CodeUnknownEvaluator, "is not a registered evaluator")
		}
	default:
		p.add(cp, CodeInvalid, "is not a valid configuration for this evaluator")
	}
}
