package server

import (
	"bytes"
	"encoding/json"

	guard "github.com/guardrail-control/guard"
)

// refData is control data as the reference's typed clients read it: guard's JSON form with every field
// of the reference's ControlDefinition present, the ones guard leaves out as null (scope filters that do
// not restrict, a condition node's other shapes, steering_context, template, template_values) and an
// evaluator's config an object. Only nulls and {} are added: ParseControlData reads the result back as
// the same data, so a client may PUT what it read.
type refData struct{ d *guard.ControlData }

// MarshalJSON writes the data through a generic tree: these are control-plane answers, not the
// evaluation path.
func (r refData) MarshalJSON() ([]byte, error) {
	if r.d == nil {
		return []byte("null"), nil
	}
	raw, err := json.Marshal(r.d)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers in evaluator configs stay as written
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	fillRefData(m)
	return json.Marshal(m)
}

// refFields are the fields of the reference's models that guard may leave out, per object kind.
var (
	refDataFields      = []string{"template", "template_values"}
	refScopeFields     = []string{"step_types", "step_names", "step_name_regex", "stages"}
	refConditionFields = []string{"selector", "evaluator", "and", "or", "not"}
)

func fillNulls(m map[string]any, keys []string) {
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			m[k] = nil
		}
	}
}

func fillRefData(m map[string]any) {
	fillNulls(m, refDataFields)
	if _, ok := m["description"]; !ok {
		m["description"] = nil
	}
	if sc, ok := m["scope"].(map[string]any); ok {
		fillNulls(sc, refScopeFields)
	}
	if a, ok := m["action"].(map[string]any); ok {
		fillNulls(a, []string{"steering_context"})
	}
	if c, ok := m["condition"].(map[string]any); ok {
		fillRefCondition(c)
	}
}

func fillRefCondition(c map[string]any) {
	fillNulls(c, refConditionFields)
	if ev, ok := c["evaluator"].(map[string]any); ok && ev["config"] == nil {
		ev["config"] = map[string]any{}
	}
	for _, k := range []string{"and", "or"} {
		if list, ok := c[k].([]any); ok {
			for _, e := range list {
				if n, ok := e.(map[string]any); ok {
					fillRefCondition(n)
				}
			}
		}
	}
	if n, ok := c["not"].(map[string]any); ok {
		fillRefCondition(n)
	}
}

// agentControlOut is one of an agent's controls (initAgent, GET agent, GET agent controls) with its data
// in the reference's full form.
type agentControlOut struct {
	guard.AgentControl
	Control refData `json:"control"`
}

func toAgentControls(list []guard.AgentControl) []agentControlOut {
	out := make([]agentControlOut, len(list))
	for i := range list {
		out[i] = agentControlOut{AgentControl: list[i], Control: refData{&list[i].Control}}
	}
	return out
}
