package mcpgateway

import (
	"fmt"
	"os"
	"slices"
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

// LabelsOf returns the labels of tool t (LabelsWhy without the why).
func (c *ToolLabels) LabelsOf(t *mcp.Tool) []string {
	l, _ := c.LabelsWhy(t, "")
	return l
}

// Where a tool's labels come from (LabelsWhy).
const (
	LabelsFromOverride    = "override"    // the labels file (--tool-labels) names the tool
	LabelsFromAnnotations = "annotations" // the tool's MCP annotations (the table above)
	LabelsFromName        = "name"        // no annotations; a well-known tool name (NameLabels)
	LabelsFromDefault     = "default"     // no annotations, a name not known: the worst case
	LabelsFromNone        = "none"        // the labels file turns annotations off and does not name the tool
)

// LabelsWhy returns the labels of tool t and where they come from: c's for a tool it names (by its exposed
// name, e.g. "fetch__fetch" in an Aggregate, or by the upstream's own name), else those of its annotations,
// else those of its name when it is a well-known one (NameLabels), else the default (untrusted, egress,
// destructive). With c's annotations turned off, a tool it does not name has none. exposed is the name
// clients see ("" when it is t.Name).
func (c *ToolLabels) LabelsWhy(t *mcp.Tool, exposed string) ([]string, string) {
	if c != nil {
		if exposed != "" {
			if l, ok := c.Tools[exposed]; ok {
				return l, LabelsFromOverride
			}
		}
		if l, ok := c.Tools[t.Name]; ok {
			return l, LabelsFromOverride
		}
		if c.Annotations != nil && !*c.Annotations {
			return nil, LabelsFromNone
		}
	}
	if t.Annotations != nil {
		return AnnotationLabels(t.Annotations), LabelsFromAnnotations
	}
	if l, ok := NameLabels[t.Name]; ok {
		return slices.Clone(l), LabelsFromName
	}
	return AnnotationLabels(nil), LabelsFromDefault
}

// NameLabels are the labels of well-known tools that come without annotations (a third-party fetch server,
// older versions of the reference servers), by the upstream's own name of the tool. A fetch, a browse or a
// web search both reads an open world and sends to it (the URL or the query is whatever the model puts in
// it: http://example.com/?q=<an SSN> carries data out), so it is untrusted and egress: under the Rule of Two
// a session that fetched a page cannot then read private data (the third label), which is what stops an
// injected page from having the model read a secret and fetch a URL carrying it. Reading mail is untrusted;
// reading and listing files or a memory graph reads the user's own closed domain (sensitive); writing,
// editing, moving files changes it (sensitive, egress, destructive, as a closed-world write's annotations
// give); sending mail or messages and posting is egress. An annotation or a labels file entry always wins
// over this list.
var NameLabels = map[string][]string{
	// read an open world, and send to it
	"fetch": {LabelUntrusted, LabelEgress}, "fetch_url": {LabelUntrusted, LabelEgress}, "fetch_page": {LabelUntrusted, LabelEgress},
	"fetch_html": {LabelUntrusted, LabelEgress}, "fetch_markdown": {LabelUntrusted, LabelEgress}, "fetch_txt": {LabelUntrusted, LabelEgress},
	"fetch_json": {LabelUntrusted, LabelEgress}, "web_fetch": {LabelUntrusted, LabelEgress}, "web_search": {LabelUntrusted, LabelEgress},
	"brave_web_search": {LabelUntrusted, LabelEgress}, "search_web": {LabelUntrusted, LabelEgress}, "browse": {LabelUntrusted, LabelEgress},
	// read an open world
	"read_email": {LabelUntrusted}, "read_inbox": {LabelUntrusted},
	// read the user's own closed domain
	"read_file": {LabelSensitive}, "read_text_file": {LabelSensitive}, "read_media_file": {LabelSensitive},
	"read_multiple_files": {LabelSensitive}, "list_directory": {LabelSensitive}, "list_directory_with_sizes": {LabelSensitive},
	"directory_tree": {LabelSensitive}, "search_files": {LabelSensitive}, "get_file_info": {LabelSensitive},
	"list_allowed_directories": {LabelSensitive}, "read_graph": {LabelSensitive}, "search_nodes": {LabelSensitive},
	"open_nodes": {LabelSensitive}, "query": {LabelSensitive}, "read_query": {LabelSensitive},
	// change the user's own closed domain
	"write_file": {LabelSensitive, LabelEgress, LabelDestructive}, "edit_file": {LabelSensitive, LabelEgress, LabelDestructive},
	"create_directory": {LabelSensitive, LabelEgress, LabelDestructive}, "move_file": {LabelSensitive, LabelEgress, LabelDestructive},
	"delete_file": {LabelSensitive, LabelEgress, LabelDestructive}, "write_query": {LabelSensitive, LabelEgress, LabelDestructive},
	// send to an open world
	"send_email": {LabelEgress, LabelDestructive}, "send_message": {LabelEgress, LabelDestructive},
	"post_message": {LabelEgress, LabelDestructive}, "http_post": {LabelEgress, LabelDestructive},
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
		steps[i].Labels, _ = g.opts.ToolLabels.LabelsWhy(t, g.exposed(t.Name))
		steps[i].Name = g.exposed(t.Name)
	}
	return steps
}

// ToolLabelsReport is one tool's labels and where they come from (Gateway.LabelsReport).
type ToolLabelsReport struct {
	Tool   string   `json:"tool"`   // the name clients see
	Labels []string `json:"labels"` // its session labels
	Why    string   `json:"why"`    // LabelsFromOverride, ...
}

// LabelsReport returns the labels of every tool of the upstream and where they come from, in the
// upstream's order.
func (g *Gateway) LabelsReport() []ToolLabelsReport {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]ToolLabelsReport, 0, len(g.tools))
	for _, t := range g.tools {
		l, why := g.opts.ToolLabels.LabelsWhy(t, g.exposed(t.Name))
		if l == nil {
			l = []string{}
		}
		out = append(out, ToolLabelsReport{Tool: g.exposed(t.Name), Labels: l, Why: why})
	}
	return out
}
