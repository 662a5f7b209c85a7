package guard

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"unicode/utf8"
)

// parser walks decoded JSON (map[string]any, []any, string, float64, bool, nil), builds the typed value
// and collects every problem with its field path.
type parser struct {
	cfg      validateConfig
	problems []Problem
	leaves   int
}

func (p *parser) add(field, code, msg string) {
	if len(p.problems) >= MaxProblems {
		return
	}
	for _, q := range p.problems {
		if q.Field == field && q.Code == code {
			return
		}
	}
	p.problems = append(p.problems, Problem{Field: field, Code: code, Message: msg})
}

// join appends a segment to a dotted field path.
func join(base, seg string) string {
	if base == "" {
		return seg
	}
	return base + "." + seg
}

// object checks that v is a JSON object whose keys are all in known, reporting the others as unknown
// fields in sorted order. ok is false (and a type problem reported) when v is not an object.
func (p *parser) object(v any, path string, known ...string) (map[string]any, bool) {
	obj, ok := v.(map[string]any)
	if !ok {
		p.add(path, CodeType, "must be an object")
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
		p.add(join(path, k), CodeUnknownField, "unknown field")
	}
	return obj, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// str returns v as a string, reporting a type problem otherwise.
func (p *parser) str(v any, path string) (string, bool) {
	s, ok := v.(string)
	if !ok {
		p.add(path, CodeType, "must be a string")
	}
	return s, ok
}

// strList decodes a list of strings; check, when set, validates each item. An empty list is reported
// when nonEmpty. The result is nil for null.
func (p *parser) strList(v any, path string, nonEmpty bool, check func(s, path string)) []string {
	if v == nil {
		return nil
	}
	arr, ok := v.([]any)
	if !ok {
		p.add(path, CodeType, "must be a list of strings")
		return nil
	}
	if len(arr) == 0 && nonEmpty {
		p.add(path, CodeEmpty, "must not be empty (omit the field to not restrict)")
	}
	out := make([]string, 0, len(arr))
	for i, item := range arr {
		ip := join(path, fmt.Sprint(i))
		s, ok := p.str(item, ip)
		if !ok {
			continue
		}
		if check != nil {
			check(s, ip)
		}
		out = append(out, s)
	}
	return out
}

// nonEmptyItem reports an empty string item.
func (p *parser) nonEmptyItem(s, path string) {
	if strings.TrimSpace(s) == "" {
		p.add(path, CodeEmpty, "must not be empty")
	}
}

// jsonObject decodes an optional free JSON object (metadata); empty and null give nil.
func (p *parser) jsonObject(v any, path string) map[string]any {
	if v == nil {
		return nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		p.add(path, CodeType, "must be an object")
		return nil
	}
	if len(obj) == 0 {
		return nil
	}
	return obj
}

var dataFields = []string{"description", "enabled", "execution", "scope", "condition", "action", "tags", "selector", "evaluator", "mode", "tests",
	"template", "template_values"}

// data decodes the control data object.
func (p *parser) data(v any) ControlData {
	d := ControlData{Enabled: true, Execution: ExecutionServer, Tags: []string{}}
	obj, ok := v.(map[string]any)
	if !ok {
		p.add("", CodeType, "control data must be a JSON object")
		return d
	}
	p.object(obj, "", dataFields...)

	if v := obj["description"]; v != nil {
		if s, ok := p.str(v, "description"); ok {
			if utf8.RuneCountInString(s) > MaxDescriptionLength {
				p.add("description", CodeTooLong, fmt.Sprintf("must be at most %d characters", MaxDescriptionLength))
			}
			d.Description = s
		}
	}
	if v := obj["enabled"]; v != nil {
		b, ok := v.(bool)
		if !ok {
			p.add("enabled", CodeType, "must be a boolean")
		}
		d.Enabled = b
	}
	if v := obj["execution"]; v != nil {
		if s, ok := p.str(v, "execution"); ok {
			switch Execution(s) {
			case ExecutionServer, ExecutionSDK:
				d.Execution = Execution(s)
			default:
				p.add("execution", CodeEnum, "must be one of server, sdk")
			}
		}
	}
	if v := obj["scope"]; v != nil {
		d.Scope = p.scope(v, "scope")
	}
	d.Condition = p.topCondition(obj)
	if v := obj["action"]; v != nil {
		d.Action = p.action(v, "action")
	} else {
		p.add("action", CodeRequired, "is required")
	}
	if v := obj["tags"]; v != nil {
		d.Tags = p.tags(v, "tags")
	}
	if v := obj["mode"]; v != nil {
		if s, ok := p.str(v, "mode"); ok {
			switch Mode(s) {
			case ModeEnforce, ModeShadow:
				d.Mode = Mode(s)
			default:
				p.add("mode", CodeEnum, "must be one of enforce, shadow")
			}
		}
	}
	if v := obj["tests"]; v != nil {
		d.Tests = p.tests(v, "tests")
	}
	// The reference's template fields: null (as guard's answers write them, so that data read can be
	// written back) is nothing; a template is rendered first, by POST /control-templates/{name}/render.
	for _, k := range []string{"template", "template_values"} {
		if obj[k] != nil {
			p.add(k, CodeInvalid, "template-backed control data is not stored: render the template first "+
				"(POST /api/v1/control-templates/{template_name}/render) and store the data it returns")
		}
	}
	return d
}

// topCondition decodes condition, or the legacy top-level selector + evaluator, into one tree.
func (p *parser) topCondition(obj map[string]any) Condition {
	cond := obj["condition"]
	legacy := obj["selector"] != nil || obj["evaluator"] != nil
	var c Condition
	switch {
	case cond != nil && legacy:
		p.add("condition", CodeConflict, "give either condition or the legacy top-level selector and evaluator, not both")
		return c
	case cond != nil:
		c = p.condition(cond, "condition", 1)
	case legacy:
		p.leaves++
		c = p.leaf(obj["selector"], obj["evaluator"], "")
	default:
		p.add("condition", CodeRequired, "is required")
		return c
	}
	if p.leaves > MaxConditionLeaves {
		p.add("condition", CodeMaxLeaves, fmt.Sprintf("must have at most %d leaves", MaxConditionLeaves))
	}
	return c
}

var scopeFields = []string{"step_types", "step_names", "step_name_regex", "stages"}

func (p *parser) scope(v any, path string) Scope {
	var s Scope
	obj, ok := p.object(v, path, scopeFields...)
	if !ok {
		return s
	}
	if v := obj["step_types"]; v != nil {
		s.StepTypes = p.strList(v, join(path, "step_types"), true, p.nonEmptyItem)
	}
	if v := obj["step_names"]; v != nil {
		s.StepNames = p.strList(v, join(path, "step_names"), true, p.nonEmptyItem)
	}
	if v := obj["step_name_regex"]; v != nil {
		rp := join(path, "step_name_regex")
		if re, ok := p.str(v, rp); ok {
			switch {
			case utf8.RuneCountInString(re) > MaxStepNameRegexLength:
				p.add(rp, CodeTooLong, fmt.Sprintf("must be at most %d characters", MaxStepNameRegexLength))
			default:
				if _, err := regexp.Compile(re); err != nil {
					p.add(rp, CodeInvalidRegex, "is not a valid regular expression (Go RE2 syntax)"+re2Kind(err))
				}
			}
			s.StepNameRegex = re
		}
	}
	if v := obj["stages"]; v != nil {
		sp := join(path, "stages")
		for _, st := range p.strList(v, sp, true, func(s, ip string) {
			if !Stage(s).Valid() {
				p.add(ip, CodeEnum, "must be one of pre, post")
			}
		}) {
			s.Stages = append(s.Stages, Stage(st))
		}
	}
	return s
}

var actionFields = []string{"decision", "steering_context", "metadata", "redact", "approval", "session"}

func (p *parser) action(v any, path string) Action {
	var a Action
	obj, ok := p.object(v, path, actionFields...)
	if !ok {
		return a
	}
	dp := join(path, "decision")
	switch dv := obj["decision"]; {
	case dv == nil:
		p.add(dp, CodeRequired, "is required")
	default:
		s, ok := p.str(dv, dp)
		if !ok {
			break
		}
		switch Decision(s) {
		case DecisionAllow, DecisionDeny, DecisionSteer, DecisionWarn, DecisionLog, DecisionObserve:
			a.Decision = Decision(s) // kept as written: observe reads back observe (it behaves as log)
		case "":
			p.add(dp, CodeRequired, "is required")
		default:
			p.add(dp, CodeEnum, "must be one of allow, deny, steer, warn, log, observe")
		}
	}
	scp := join(path, "steering_context")
	if sv := obj["steering_context"]; sv != nil {
		a.SteeringContext = p.steering(sv, scp)
	} else if a.Decision == DecisionSteer {
		p.add(scp, CodeRequired, "is required when decision is steer")
	}
	a.Metadata = p.jsonObject(obj["metadata"], join(path, "metadata"))
	if rv := obj["redact"]; rv != nil {
		a.Redact = p.redact(rv, join(path, "redact"), a.Decision)
	}
	if av := obj["approval"]; av != nil {
		a.Approval = p.approval(av, join(path, "approval"), a.Decision)
	}
	if sv := obj["session"]; sv != nil {
		a.Session = p.sessionEffect(sv, join(path, "session"))
	}
	return a
}

func (p *parser) steering(v any, path string) *SteeringContext {
	obj, ok := p.object(v, path, "message", "required_actions")
	if !ok {
		return nil
	}
	sc := &SteeringContext{}
	mp := join(path, "message")
	if mv := obj["message"]; mv == nil {
		p.add(mp, CodeRequired, "is required")
	} else if s, ok := p.str(mv, mp); ok {
		if strings.TrimSpace(s) == "" {
			p.add(mp, CodeRequired, "must not be empty")
		}
		sc.Message = s
	}
	if rv := obj["required_actions"]; rv != nil {
		sc.RequiredActions = p.strList(rv, join(path, "required_actions"), false, p.nonEmptyItem)
		if len(sc.RequiredActions) == 0 {
			sc.RequiredActions = nil
		}
	}
	return sc
}

func (p *parser) tags(v any, path string) []string {
	arr, ok := v.([]any)
	if ok && len(arr) > MaxTags {
		p.add(path, CodeTooLong, fmt.Sprintf("must have at most %d tags", MaxTags))
		return []string{}
	}
	out := p.strList(v, path, false, func(s, ip string) {
		switch n := utf8.RuneCountInString(s); {
		case n == 0:
			p.add(ip, CodeEmpty, "must not be empty")
		case n > MaxTagLength:
			p.add(ip, CodeTooLong, fmt.Sprintf("must be at most %d characters", MaxTagLength))
		}
	})
	if out == nil {
		out = []string{}
	}
	return out
}

// re2Kind is ": " and the kind of an RE2 parse error ("missing closing )"), without the part of the
// pattern that syntax.Error quotes: values are never echoed in error messages.
func re2Kind(err error) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		return ": " + se.Code.String()
	}
	return ""
}
