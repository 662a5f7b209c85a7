package mcpgateway

import (
	"fmt"
	"os"
	"sort"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"sigs.k8s.io/yaml"

	"github.com/guardrail-control/guard"

	"github.com/guardrail-control/guard/internal/strictjson"
)

// Session labels of MCP tools (docs/mcp.md, "Session labels from tool annotations").
//
// The gateway registers each upstream tool as a step that carries session labels, so that session
// controls (the rule-of-two template above all) protect any MCP server with no list of tool names. The
// labels come from the tool's MCP annotations, read as the Agents Rule of Two reads a session's
// capabilities:
//
//	readOnlyHint  openWorldHint  labels
//	true          true           untrusted             reads an open world: its result is content nobody vouches for
//	true          false          sensitive             reads the user's own closed domain (files, databases, memory)
//	false         true           egress                changes or sends to an open world (posts, mail, payments)
//	false         false          sensitive, egress     changes the user's own systems (writes files, updates rows)
//	(no annotations at all)      untrusted, egress     unknown: the worst case of an open-world tool
//
// A tool that may write (readOnlyHint false, or no annotations) also gets "destructive" unless it says
// destructiveHint: false: rule-of-two ignores it; a control of your own may gate it. Absent hints take
// the MCP defaults (readOnlyHint false, openWorldHint true, destructiveHint true).
//
// An open-world tool that writes is labelled egress, not untrusted: the Rule of Two lets a session hold
// sensitive data and egress together (an agent that reads your files and sends mail) as long as it never
// took in untrusted content; labelling the reply of a post untrusted would deny every such session. A
// tool that reads an open world and also sends (a fetch of an attacker's URL leaks its query string) is
// labelled untrusted only: override it when the difference matters.
//
// Annotations are hints of the upstream server, which may be wrong; ToolLabels overrides them per tool.

// Labels the annotations map to.
const (
	LabelUntrusted   = "untrusted"
	LabelSensitive   = "sensitive"
	LabelEgress      = "egress"
	LabelDestructive = "destructive"
)

// AnnotationLabels returns the session labels of a tool with annotations a (nil: none), per the table
// above.
func AnnotationLabels(a *mcp.ToolAnnotations) []string {
	if a == nil {
		return []string{LabelUntrusted, LabelEgress, LabelDestructive}
	}
	openWorld := a.OpenWorldHint == nil || *a.OpenWorldHint
	var out []string
	switch {
	case a.ReadOnlyHint && openWorld:
		out = append(out, LabelUntrusted)
	case a.ReadOnlyHint:
		out = append(out, LabelSensitive)
	case openWorld:
		out = append(out, LabelEgress)
	default:
		out = append(out, LabelSensitive, LabelEgress)
	}
	if !a.ReadOnlyHint && (a.DestructiveHint == nil || *a.DestructiveHint) {
		out = append(out, LabelDestructive)
	}
	return out
}

// ToolLabels is the gateway's configuration of tool labels (guard mcp --tool-labels FILE): the labels of
// the tools it names replace those their annotations give.
type ToolLabels struct {
	// Tools maps a tool's name to its labels; an empty list gives the tool none.
	Tools map[string][]string `json:"tools,omitempty"`
	// Annotations, when false, turns the mapping of annotations off: only the tools in Tools carry
	// labels. Default true.
	Annotations *bool `json:"annotations,omitempty"`
}

// LabelsOf returns the labels of tool t: c's for a tool it names, else those of its annotations (none
// when c turns annotations off). A nil c maps every tool's annotations.
func (c *ToolLabels) LabelsOf(t *mcp.Tool) []string {
	if c != nil {
		if l, ok := c.Tools[t.Name]; ok {
			return l
		}
		if c.Annotations != nil && !*c.Annotations {
			return nil
		}
	}
	return AnnotationLabels(t.Annotations)
}

// Check validates the labels (at tools.<name>.<index>).
func (c *ToolLabels) Check() error {
	var probs []guard.Problem
	names := make([]string, 0, len(c.Tools))
	for n := range c.Tools {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if n == "" {
			probs = append(probs, guard.Problem{Field: "tools", Code: guard.CodeInvalid, Message: "a tool name must not be empty"})
			continue
		}
		probs = append(probs, guard.CheckLabels(c.Tools[n], "tools."+n)...)
	}
	if len(probs) > 0 {
		return &guard.ValidationError{Problems: probs}
	}
	return nil
}

// maxToolLabelsFile bounds a tool labels file.
const maxToolLabelsFile = 1 << 20

// LoadToolLabels reads a tool labels file, YAML or JSON:
//
//	tools:
//	  fetch: [untrusted]
//	  calculator: []
//	annotations: true
//
// Unknown fields and bad labels are errors naming them.
func LoadToolLabels(path string) (*ToolLabels, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tool labels: %w", err)
	}
	if len(raw) > maxToolLabelsFile {
		return nil, fmt.Errorf("tool labels %s: larger than %d bytes", path, maxToolLabelsFile)
	}
	js, err := yaml.YAMLToJSONStrict(raw) // a key repeated in the YAML is an error
	if err != nil {
		return nil, fmt.Errorf("tool labels %s: %w", path, err)
	}
	var c ToolLabels
	if err := strictjson.Unmarshal(js, &c); err != nil { // keys compared exactly, unknown ones refused
		return nil, fmt.Errorf("tool labels %s: %w", path, err)
	}
	if err := c.Check(); err != nil {
		return nil, fmt.Errorf("tool labels %s: %w", path, err)
	}
	return &c, nil
}

// labelledSteps is stepsOf with each step's labels (Options.ToolLabels).
func (g *Gateway) labelledSteps(tools []*mcp.Tool) []guard.StepSchema {
	steps := stepsOf(tools)
	for i, t := range tools {
		steps[i].Labels = g.opts.ToolLabels.LabelsOf(t)
	}
	return steps
}
