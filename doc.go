// Package guard is the embeddable evaluation engine of the guardrail control service: it decides whether
// an agent's step (an LLM call or a tool call) may proceed, given a set of controls.
//
// # The control formula
//
// A control is scope + condition + action:
//
//   - scope says when it applies: stages (pre, post), step types, and step names (an exact list OR an
//     unanchored regular expression); an omitted filter does not restrict;
//   - condition is a boolean tree of leaves, each a selector (a dotted path into the step
//     {type, name, input, output, context}, "*" for the whole step) and an evaluator (regex, list, or
//     any registered one) combined with and, or and not, evaluated left to right with short-circuit;
//   - action is the decision when the condition matches: deny, steer (with a steering context), allow,
//     warn or log.
//
// When several controls match, deny wins, then steer (the first in control-id order), and allow, warn and
// log never block. An evaluator error counts as a match (on_error deny, the default: fail closed) or as
// no match (on_error allow); either way the control is reported in Result.Errors.
//
// # Engine
//
// An Engine compiles controls once (Update) into an immutable snapshot that is swapped atomically, and
// evaluates steps against it many times, concurrently (Evaluate for the full result, Check for the
// decision alone, as an error). Compilation indexes controls by stage, step type and step name, so a step
// pays only for the controls that can apply to it; and for every selector path it builds one
// Aho-Corasick automaton over the literals the evaluators require (evaluator.Prefilter), so one pass
// over the text rules out every regex or list that cannot match. Check on a step that matches nothing
// allocates nothing. Evaluators that call external services run concurrently under their timeout_ms.
//
// # Example
//
//	data, err := guard.ParseControlData([]byte(`{
//	    "scope": {"stages": ["pre"]},
//	    "condition": {"selector": {"path": "input"},
//	                  "evaluator": {"name": "regex", "config": {"pattern": "\\b\\d{3}-\\d{2}-\\d{4}\\b"}}},
//	    "action": {"decision": "deny"}}`))
//	if err != nil { ... }
//	engine := guard.New()
//	if err := engine.Update([]guard.Control{{ID: 1, Name: "block-ssn", Data: data}}); err != nil { ... }
//
//	err = engine.Check(ctx, &guard.Step{Type: "llm", Name: "chat", Input: prompt}, guard.StagePre)
//	var denied *guard.ControlViolationError
//	if errors.As(err, &denied) { ... refuse, citing denied.ControlName and denied.Message ... }
//
// The built-in evaluators live in package evaluator and register themselves when it is imported (the
// engine imports it). Selected data that is not a string is handed to text evaluators as compact JSON
// with sorted keys; see MaxSelectedDepth and MaxSelectedTextBytes for the limits on it.
package guard
