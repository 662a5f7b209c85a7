package store

import (
	"encoding/json"
	"errors"
	"fmt"

	guard "github.com/guardrail-control/guard"
)

// problem returns a *guard.ValidationError with one problem. The message never repeats the value.
func problem(field, code, msg string) error {
	return &guard.ValidationError{Problems: []guard.Problem{{Field: field, Code: code, Message: msg}}}
}

func checkControlName(name string) error {
	if err := guard.ValidateControlName(name); err != nil {
		return problem("name", guard.CodeInvalid, "control name "+err.Error())
	}
	return nil
}

// normalizeData validates control data with the root package's rules and returns it in its stored form
// (defaults applied: an empty execution is "server"; the decision and enabled kept as given). Unknown
// evaluators are accepted: the server that stores a control need not have every evaluator a client
// library runs. Problems are reported as *guard.ValidationError with paths under "data".
func normalizeData(d *guard.ControlData) (guard.ControlData, error) {
	c := *d
	if c.Execution == "" {
		c.Execution = guard.ExecutionServer
	}
	raw, err := json.Marshal(&c)
	if err != nil {
		return guard.ControlData{}, problem("data", guard.CodeType, "control data cannot be encoded as JSON")
	}
	out, err := guard.ParseControlData(raw, guard.AllowUnknownEvaluators())
	if err != nil {
		var ve *guard.ValidationError
		if errors.As(err, &ve) {
			return guard.ControlData{}, ve.WithPrefix("data")
		}
		return guard.ControlData{}, problem("data", guard.CodeInvalid, err.Error())
	}
	out.Enabled = d.Enabled
	if enc, err := json.Marshal(&out); err != nil || !storableJSON(string(enc)) {
		return guard.ControlData{}, &guard.ValidationError{Problems: []guard.Problem{unstorable("data")}}
	}
	return out, nil
}

// agentKey normalises an agent name for a lookup; a name that cannot exist is simply not found.
func agentKey(name string) (string, error) {
	n, err := guard.NormalizeAgentName(name)
	if err != nil {
		return "", fmt.Errorf("store: %w", guard.ErrAgentNotFound)
	}
	return n, nil
}
