package guard

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// MaxControlTests bounds the tests a control carries (data.tests): they run on every save.
const MaxControlTests = 100

// MaxTestNameLength bounds the name of a test, in characters.
const MaxTestNameLength = 255

var (
	testFields   = []string{"name", "step", "stage", "expect"}
	stepFields   = []string{"type", "name", "input", "output", "context"}
	expectFields = []string{"decision", "redacted"}
)

// tests decodes data.tests: the per-control form of TestCase without a control name, the name of the
// control being the one the data belongs to. Expect is "match", "no_match" or {"decision"?, "redacted"?}
// (what the control alone decides, and the stage's payload the agent receives after its redaction);
// matches and no_matches, which name other controls, belong to test files.
func (p *parser) tests(v any, path string) []TestCase {
	arr, ok := v.([]any)
	if !ok {
		p.add(path, CodeType, "must be a list of tests")
		return nil
	}
	if len(arr) > MaxControlTests {
		p.add(path, CodeTooLong, fmt.Sprintf("must have at most %d tests", MaxControlTests))
		return nil
	}
	out := make([]TestCase, 0, len(arr))
	seen := make(map[string]bool, len(arr))
	for i, item := range arr {
		at := join(path, strconv.Itoa(i))
		obj, ok := p.object(item, at, testFields...)
		if !ok {
			continue
		}
		var tc TestCase
		np := join(at, "name")
		switch nv := obj["name"]; {
		case nv == nil:
			p.add(np, CodeRequired, "is required")
		default:
			if s, ok := p.str(nv, np); ok {
				switch n := utf8.RuneCountInString(s); {
				case n == 0:
					p.add(np, CodeRequired, "must not be empty")
				case n > MaxTestNameLength:
					p.add(np, CodeTooLong, fmt.Sprintf("must be at most %d characters", MaxTestNameLength))
				case seen[s]:
					p.add(np, CodeInvalid, "names another test of this control too: test names must be unique")
				}
				seen[s] = true
				tc.Name = s
			}
		}
		if sv := obj["step"]; sv == nil {
			p.add(join(at, "step"), CodeRequired, "is required")
		} else {
			tc.Step = p.testStep(sv, join(at, "step"))
		}
		sp := join(at, "stage")
		if st := obj["stage"]; st == nil {
			p.add(sp, CodeRequired, "is required")
		} else if s, ok := p.str(st, sp); ok {
			if !Stage(s).Valid() {
				p.add(sp, CodeEnum, "must be one of pre, post")
			}
			tc.Stage = Stage(s)
		}
		tc.Expect = p.testExpect(obj["expect"], join(at, "expect"))
		out = append(out, tc)
	}
	return out
}

// testStep decodes the step of a test: the fields of Step, strictly (control data is strict).
func (p *parser) testStep(v any, path string) Step {
	var st Step
	obj, ok := p.object(v, path, stepFields...)
	if !ok {
		return st
	}
	tp := join(path, "type")
	if tv := obj["type"]; tv == nil {
		p.add(tp, CodeRequired, "is required")
	} else if s, ok := p.str(tv, tp); ok {
		if s == "" {
			p.add(tp, CodeRequired, "must not be empty")
		}
		st.Type = s
	}
	if nv := obj["name"]; nv != nil {
		st.Name, _ = p.str(nv, join(path, "name"))
	}
	st.Input, st.Output = obj["input"], obj["output"]
	if cv := obj["context"]; cv != nil {
		st.Context = p.jsonObject(cv, join(path, "context"))
	}
	return st
}

// testExpect decodes the expectation of a control's test.
func (p *parser) testExpect(v any, path string) TestExpect {
	const want = "must be match, no_match or an object {decision, redacted}"
	switch x := v.(type) {
	case nil:
		p.add(path, CodeRequired, "is required")
	case string:
		if x != ExpectMatch && x != ExpectNoMatch {
			p.add(path, CodeEnum, want)
		}
		return TestExpect{Match: x}
	case map[string]any:
		obj, _ := p.object(x, path, expectFields...)
		var e TestExpect
		if rv, ok := obj["redacted"]; ok {
			if rv == nil {
				p.add(join(path, "redacted"), CodeType, "must be the payload the agent receives (a string, number, list or object)")
			}
			e.Redacted = rv
		}
		dp := join(path, "decision")
		dv, ok := obj["decision"]
		if !ok || dv == nil {
			if e.Redacted == nil {
				p.add(dp, CodeRequired, "is required (or redacted)")
			}
			return e
		}
		s, ok := p.str(dv, dp)
		if !ok {
			return e
		}
		switch Decision(s) {
		case DecisionAllow, DecisionDeny, DecisionSteer:
		default:
			p.add(dp, CodeEnum, "must be one of allow, deny, steer")
		}
		e.Decision = Decision(s)
		return e
	default:
		p.add(path, CodeType, want)
	}
	return TestExpect{}
}
