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

	"github.com/guardrail-control/guard/internal/strictjson"
)

// MetaKey is the key of the _meta entry a blocked call's result carries, for clients that act on it
// programmatically: {"decision", "stage", "control_id", "control_name", "message", "required_actions"}.
const MetaKey = "guard"

// StepOutput is the step output a tool result is checked with at stage post:
//
//   - the result's structuredContent, when it has one (a JSON value: controls select into it, e.g.
//     output.items.0.url);
//   - otherwise the text a model reads in it: the text of its text content blocks and of its embedded
//     text resources, in their order, joined with "\n" (a string; "" when there is none).
//
// Images, audio, binary resources (blob) and resource links are not part of the output: the gateway cannot
// read them. They are named in the step's context instead (UncheckedContent), so that a control can refuse
// a result that carries them. A result with isError true is checked the same way: the model sees it too.
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
		if t, ok := blockText(c); ok {
			if n == 0 {
				one = t
			}
			n++
			size += len(t) + 1
		}
	}
	if n <= 1 {
		return one, nil // the common case: one text block, no copy
	}
	var b strings.Builder
	b.Grow(size - 1) // one allocation
	first := true
	for _, c := range res.Content {
		if t, ok := blockText(c); ok {
			if !first {
				b.WriteByte('\n')
			}
			b.WriteString(t)
			first = false
		}
	}
	return b.String(), nil
}

// blockText is the text of a content block that is part of StepOutput: a text block, or an embedded
// resource with text.
func blockText(c mcp.Content) (string, bool) {
	switch x := c.(type) {
	case *mcp.TextContent:
		if x != nil {
			return x.Text, true
		}
	case *mcp.EmbeddedResource:
		if x != nil && x.Resource != nil && x.Resource.Blob == nil {
			return x.Resource.Text, true
		}
	}
	return "", false
}

// UncheckedKey is the key of the step context under which the post stage of a tool call lists the kinds of
// content of its result that StepOutput leaves out: "image", "audio", "blob" (an embedded binary
// resource), "resource_link", and with structuredContent also "resource" (an embedded text resource).
// Absent when there are none. A control with the selector context.unchecked_content (evaluator list or
// regex) can deny such results.
const UncheckedKey = "unchecked_content"

// UncheckedContent returns the kinds of content of res that are not part of its StepOutput (see
// UncheckedKey), each once, in the order met; nil when there are none.
func UncheckedContent(res *mcp.CallToolResult) []any {
	if res == nil {
		return nil
	}
	var kinds []any
	add := func(k string) {
		for _, have := range kinds {
			if have == k {
				return
			}
		}
		kinds = append(kinds, k)
	}
	for _, c := range res.Content {
		switch x := c.(type) {
		case *mcp.ImageContent:
			add("image")
		case *mcp.AudioContent:
			add("audio")
		case *mcp.ResourceLink:
			add("resource_link")
		case *mcp.EmbeddedResource:
			switch {
			case x != nil && x.Resource != nil && x.Resource.Blob != nil:
				add("blob")
			case res.StructuredContent != nil:
				add("resource")
			}
		}
	}
	return kinds
}

// jsonValue returns v as the JSON value selectors work on (string, float64, bool, nil, []any,
// map[string]any).
func jsonValue(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any, []any, string, float64, bool, nil:
		return x, nil
	case json.RawMessage:
		var out any
		err := strictjson.UnmarshalLenient(x, &out)
		return out, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = strictjson.UnmarshalLenient(b, &out)
	return out, err
}

// RedactedResult is res as the client sees it once a redacting control rewrote its step output (output,
// the redacted StepOutput of res):
//
//   - with structuredContent, the structured content is output, and the text content blocks (by
//     convention its serialisation) are replaced by one text block holding output as JSON, where the first
//     of them was;
//   - otherwise each block whose text StepOutput joined (text blocks, embedded text resources) gets its
//     part of output: output split at the line breaks that joined them. When a replacement added or
//     removed line breaks, so that the parts cannot be told apart, the first such block gets the whole of
//     output and the others' text is emptied: nothing unredacted is left.
//
// Other content blocks (images, audio, resource links) are kept; no block moves; res itself is not
// modified.
func RedactedResult(res *mcp.CallToolResult, output any) (*mcp.CallToolResult, error) {
	out := *res
	text, isText := output.(string)
	if res.StructuredContent != nil || !isText {
		b, err := json.Marshal(output)
		if err != nil {
			return nil, fmt.Errorf("the redacted tool result cannot be encoded: %w", err)
		}
		text = string(b)
	}
	out.Content = make([]mcp.Content, 0, len(res.Content))
	if res.StructuredContent != nil {
		out.StructuredContent = output
		placed := false
		for _, c := range res.Content {
			if _, ok := c.(*mcp.TextContent); !ok {
				out.Content = append(out.Content, c)
			} else if !placed {
				out.Content = append(out.Content, &mcp.TextContent{Text: text})
				placed = true
			}
		}
		return &out, nil
	}
	parts := splitParts(res, text)
	i := 0
	for _, c := range res.Content {
		if _, ok := blockText(c); !ok {
			out.Content = append(out.Content, c)
			continue
		}
		out.Content = append(out.Content, withText(c, parts[i]))
		i++
	}
	if i == 0 {
		out.Content = append(out.Content, &mcp.TextContent{Text: text})
	}
	return &out, nil
}

// splitParts splits the redacted text of res into one part per block of its StepOutput (see
// RedactedResult).
func splitParts(res *mcp.CallToolResult, text string) []string {
	var lines []int // line breaks in each block's text
	total := 0
	for _, c := range res.Content {
		if t, ok := blockText(c); ok {
			n := strings.Count(t, "\n")
			lines = append(lines, n)
			total += n + 1
		}
	}
	parts := make([]string, len(lines))
	if len(lines) == 0 {
		return parts
	}
	all := strings.Split(text, "\n")
	if len(all) != total {
		parts[0] = text // the others stay empty
		return parts
	}
	at := 0
	for i, n := range lines {
		parts[i] = strings.Join(all[at:at+n+1], "\n")
		at += n + 1
	}
	return parts
}

// withText is a copy of the block c (a text block or an embedded text resource) with text instead of its
// own.
func withText(c mcp.Content, text string) mcp.Content {
	switch x := c.(type) {
	case *mcp.TextContent:
		cp := *x
		cp.Text = text
		return &cp
	case *mcp.EmbeddedResource:
		cp := *x
		rc := *x.Resource
		rc.Text = text
		cp.Resource = &rc
		return &cp
	}
	return c
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
