package mcpgateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client"
)

// MetaKey is the key of the _meta entry a blocked call's result carries, for clients that act on it
// programmatically: {"decision", "stage", "control_id", "control_name", "message", "required_actions"}.
const MetaKey = "guard"

// StepOutput is the step output a tool result is checked with at stage post:
//
//   - the result's structuredContent, when it has one (a JSON value: controls select into it, e.g.
//     output.items.0.url);
//   - otherwise the text of its text content blocks, joined with "\n" (a string; "" when there is none).
//
// Images, audio, resource links and embedded resources are not part of the output. A result with isError
// true is checked the same way: the model sees it too.
func StepOutput(res *mcp.CallToolResult) (any, error) {
	if res == nil {
		return "", nil
	}
	if res.StructuredContent != nil {
		return jsonValue(res.StructuredContent)
	}
	n, size := 0, 0
	var one string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok && t != nil {
			if n == 0 {
				one = t.Text
			}
			n++
			size += len(t.Text) + 1
		}
	}
	if n <= 1 {
		return one, nil // the common case: one text block, no copy
	}
	var b strings.Builder
	b.Grow(size - 1) // one allocation
	first := true
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok && t != nil {
			if !first {
				b.WriteByte('\n')
			}
			b.WriteString(t.Text)
			first = false
		}
	}
	return b.String(), nil
}

// jsonValue returns v as the JSON value selectors work on (string, float64, bool, nil, []any,
// map[string]any).
func jsonValue(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any, []any, string, float64, bool, nil:
		return x, nil
	case json.RawMessage:
		var out any
		err := json.Unmarshal(x, &out)
		return out, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(b, &out)
	return out, err
}

// RedactedResult is res as the client sees it once a redacting control rewrote its step output (output,
// the redacted StepOutput of res):
//
//   - with structuredContent, the structured content is output, and the text content blocks (by
//     convention its serialisation) are replaced by one text block holding output as JSON;
//   - otherwise the text content blocks, which StepOutput joined into the checked text, are replaced by
//     one text block holding output, where the first of them was.
//
// Other content blocks (images, resources) are kept, in place; res itself is not modified.
func RedactedResult(res *mcp.CallToolResult, output any) (*mcp.CallToolResult, error) {
	out := *res
	text, isText := output.(string)
	if res.StructuredContent != nil || !isText {
		b, err := json.Marshal(output)
		if err != nil {
			return nil, fmt.Errorf("the redacted tool result cannot be encoded: %w", err)
		}
		text = string(b)
		if res.StructuredContent != nil {
			out.StructuredContent = output
		}
	}
	out.Content = make([]mcp.Content, 0, len(res.Content))
	placed := false
	for _, c := range res.Content {
		if _, ok := c.(*mcp.TextContent); !ok {
			out.Content = append(out.Content, c)
			continue
		}
		if !placed {
			out.Content = append(out.Content, &mcp.TextContent{Text: text})
			placed = true
		}
	}
	if !placed && res.StructuredContent == nil {
		out.Content = append(out.Content, &mcp.TextContent{Text: text})
	}
	return &out, nil
}

// replaced reports whether a Guard replaced a step's payload (before, what the gateway gave it) with a
// redacted one (after): a different string, or another object or list (a redaction is always a copy).
func replaced(before, after any) bool {
	switch b := before.(type) {
	case string:
		a, ok := after.(string)
		return !ok || a != b
	case map[string]any, []any:
		va, vb := reflect.ValueOf(after), reflect.ValueOf(before)
		return va.Kind() != vb.Kind() || va.UnsafePointer() != vb.UnsafePointer()
	}
	return false
}

// BlockedResult is the tool error result (isError true) a client gets for a call a control denied or
// steered; nil when err is neither a *guard.ControlViolationError nor a *guard.ControlSteerError.
//
// Its text names the control and gives its message, so that the model can tell the user (deny) or correct
// the call and retry (steer, with the required actions). Its _meta carries the same under MetaKey.
func BlockedResult(stage guard.Stage, err error) *mcp.CallToolResult {
	var (
		v    *guard.ControlViolationError
		s    *guard.ControlSteerError
		text strings.Builder
		meta = map[string]any{"stage": string(stage)}
	)
	what := "Tool call"
	if stage == guard.StagePost {
		what = "Tool result withheld:"
	}
	switch {
	case errors.As(err, &v):
		meta["decision"] = string(guard.DecisionDeny)
		meta["control_id"], meta["control_name"], meta["message"] = v.ControlID, v.ControlName, v.Message
		if stage == guard.StagePost {
			fmt.Fprintf(&text, "%s it was blocked by guard control %q", what, v.ControlName)
		} else {
			fmt.Fprintf(&text, "%s blocked by guard control %q", what, v.ControlName)
		}
		if v.Message != "" {
			fmt.Fprintf(&text, ": %s", v.Message)
		} else {
			text.WriteByte('.')
		}
	case errors.As(err, &s):
		msg := s.SteeringContext.Message
		if msg == "" {
			msg = s.Message
		}
		actions := s.SteeringContext.RequiredActions
		if actions == nil {
			actions = []string{}
		}
		meta["decision"] = string(guard.DecisionSteer)
		meta["control_id"], meta["control_name"], meta["message"], meta["required_actions"] = s.ControlID, s.ControlName, msg, actions
		if stage == guard.StagePost {
			fmt.Fprintf(&text, "%s guard control %q steers this call", what, s.ControlName)
		} else {
			fmt.Fprintf(&text, "%s steered by guard control %q", what, s.ControlName)
		}
		if msg != "" {
			fmt.Fprintf(&text, ": %s", msg)
		}
		if len(actions) > 0 {
			text.WriteString("\nRequired actions:")
			for _, a := range actions {
				text.WriteString("\n- ")
				text.WriteString(a)
			}
		}
		text.WriteString("\nCorrect the call and try again.")
	default:
		return nil
	}
	var ar *client.ApprovalRequiredError
	if errors.As(err, &ar) && ar.Approval.ID != "" {
		// A person may let this exact call through: say where, and that a retry then runs.
		meta["approval_id"], meta["approval_url"], meta["approval_status"] = ar.Approval.ID, ar.Approval.URL, ar.Status
		if ar.Status == guard.ApprovalRejected {
			fmt.Fprintf(&text, "\nApproval request %s was rejected", ar.Approval.ID)
			if ar.Comment != "" {
				fmt.Fprintf(&text, ": %s", ar.Comment)
			}
			text.WriteByte('.')
		} else {
			fmt.Fprintf(&text, "\nA person may approve this exact call: approval request %s (%s, or Approvals in the guard dashboard). "+
				"Once it is approved, call the tool again with the same arguments.", ar.Approval.ID, ar.Approval.URL)
		}
	}
	return &mcp.CallToolResult{
		Meta:    mcp.Meta{MetaKey: meta},
		Content: []mcp.Content{&mcp.TextContent{Text: text.String()}},
		IsError: true,
	}
}
