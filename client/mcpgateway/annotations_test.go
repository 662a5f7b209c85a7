package mcpgateway_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client/mcpgateway"
	"github.com/guardrail-control/guard/templates"
)

func ptr(b bool) *bool { return &b }

func TestAnnotationLabels(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    *mcp.ToolAnnotations
		want string
	}{
		{"no annotations: the worst case", nil, "untrusted,egress,destructive"},
		{"empty annotations: the MCP defaults (may write, open world)", &mcp.ToolAnnotations{}, "egress,destructive"},
		{"reads an open world", &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(true)}, "untrusted"},
		{"reads, open world by default", &mcp.ToolAnnotations{ReadOnlyHint: true}, "untrusted"},
		{"reads a closed world", &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}, "sensitive"},
		{"writes an open world, additively", &mcp.ToolAnnotations{OpenWorldHint: ptr(true), DestructiveHint: ptr(false)}, "egress"},
		{"writes a closed world", &mcp.ToolAnnotations{OpenWorldHint: ptr(false), DestructiveHint: ptr(true)}, "sensitive,egress,destructive"},
		{"read-only ignores destructiveHint", &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: ptr(true)}, "untrusted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(mcpgateway.AnnotationLabels(tc.a), ","); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestToolLabelsOverride(t *testing.T) {
	fetch := &mcp.Tool{Name: "fetch", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}
	calc := &mcp.Tool{Name: "calc", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}}
	off := false
	for _, tc := range []struct {
		name string
		c    *mcpgateway.ToolLabels
		tool *mcp.Tool
		want string
	}{
		{"nil: annotations", nil, fetch, "untrusted"},
		{"named: replaced", &mcpgateway.ToolLabels{Tools: map[string][]string{"fetch": {"untrusted", "egress"}}}, fetch, "untrusted,egress"},
		{"named with none", &mcpgateway.ToolLabels{Tools: map[string][]string{"calc": {}}}, calc, ""},
		{"not named: annotations", &mcpgateway.ToolLabels{Tools: map[string][]string{"calc": {}}}, fetch, "untrusted"},
		{"annotations off", &mcpgateway.ToolLabels{Annotations: &off}, fetch, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(tc.c.LabelsOf(tc.tool), ","); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLoadToolLabels(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "labels.yaml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	c, err := mcpgateway.LoadToolLabels(write("tools:\n  fetch: [untrusted, egress]\n  calc: []\nannotations: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.Tools["fetch"], ",") != "untrusted,egress" || len(c.Tools["calc"]) != 0 || *c.Annotations {
		t.Fatalf("%+v", c)
	}
	for _, tc := range []struct{ body, want string }{
		{"tools:\n  fetch: [\"no spaces\"]\n", "tools.fetch.0"},
		{"tools:\n  fetch: untrusted\n", "tools.fetch: must be an array"},
		{"Tools:\n  fetch: [untrusted]\n", "Tools: is an unknown field"},
		{"tools:\n  fetch: [untrusted]\n  fetch: [sends]\n", `key "fetch" already set`},
		{"tool:\n  fetch: [untrusted]\n", "tool: is an unknown field"},
		{"tools:\n  fetch: [" + strings.Repeat("a", 65) + "]\n", "at most 64 bytes"},
	} {
		_, err := mcpgateway.LoadToolLabels(write(tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%q: %v, want %q", tc.body, err, tc.want)
		}
	}
	if _, err := mcpgateway.LoadToolLabels(filepath.Join(dir, "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

// annotatedUpstream is an MCP server whose tools carry annotations: fetch reads an open world, read_file
// a closed one, post_url writes to an open world.
func annotatedUpstream() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "annotated", Version: "1"}, nil)
	type in struct {
		Arg string `json:"arg"`
	}
	tool := func(name string, a *mcp.ToolAnnotations) {
		mcp.AddTool(srv, &mcp.Tool{Name: name, Annotations: a}, func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " done"}}}, nil, nil
		})
	}
	tool("fetch", &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(true)})
	tool("read_file", &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)})
	tool("post_url", &mcp.ToolAnnotations{OpenWorldHint: ptr(true), DestructiveHint: ptr(false)})
	return srv
}

// TestRuleOfTwoFromAnnotations: the gateway's steps carry the labels of the tools' annotations; a
// LocalGuard with rule-of-two rendered without parameters denies the third call of one client session
// (fetch, read_file, post_url), naming the two earlier steps; each client session is its own session.
func TestRuleOfTwoFromAnnotations(t *testing.T) {
	ctx := context.Background()
	tpl, _ := templates.Shipped().Get("rule-of-two")
	r, err := tpl.Render(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	lg, err := mcpgateway.NewLocalGuard([]guard.Control{{ID: 1, Name: "rule-of-two", Data: r.Data}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// session connects a client through a gateway of its own to an upstream of its own: a stdio client
	// is one MCP session per gateway process. The guard (engine and session store) is shared, so that only
	// the MCP session tells the three sessions apart.
	session := func() (*mcpgateway.Gateway, *mcp.ClientSession) {
		t1, t2 := mcp.NewInMemoryTransports()
		upSess, err := annotatedUpstream().Connect(ctx, t2, nil)
		if err != nil {
			t.Fatal(err)
		}
		gw, err := mcpgateway.Connect(ctx, t1, mcpgateway.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := lg.SyncSteps(ctx, gw.Steps()); err != nil {
			t.Fatal(err)
		}
		c1, c2 := mcp.NewInMemoryTransports()
		ss, err := gw.Server(lg).Connect(ctx, c2, nil)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, c1, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait(); _ = gw.Close(); _ = upSess.Close() })
		return gw, cs
	}
	gw, one := session()
	labels := map[string]string{}
	for _, st := range gw.Steps() {
		labels[st.Name] = strings.Join(st.Labels, ",")
	}
	if labels["fetch"] != "untrusted" || labels["read_file"] != "sensitive" || labels["post_url"] != "egress" {
		t.Fatalf("step labels %v", labels)
	}
	call := func(cs *mcp.ClientSession, name string) *mcp.CallToolResult {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"arg": "x"}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, name := range []string{"fetch", "read_file"} {
		if res := call(one, name); res.IsError {
			t.Fatalf("%s: %s", name, text(res))
		}
	}
	res := call(one, "post_url")
	if !res.IsError || !strings.Contains(text(res), "step 1 (fetch) added label untrusted") ||
		!strings.Contains(text(res), "step 2 (read_file) added label sensitive") {
		t.Fatalf("post_url in the session of fetch and read_file: %s", text(res))
	}
	for _, name := range []string{"fetch", "read_file", "post_url"} {
		if _, cs := session(); call(cs, name).IsError {
			t.Fatalf("%s alone in its session was denied", name)
		}
	}
}

// TestSyncedStepsCarryLabels: a tool that appears later is handed to the Guard with the labels of its
// annotations, and the overrides of Options.ToolLabels apply to it.
func TestSyncedStepsCarryLabels(t *testing.T) {
	r := newRig(t, mcpgateway.Options{ToolLabels: &mcpgateway.ToolLabels{Tools: map[string][]string{"echo": {"untrusted"}}}})
	mcp.AddTool(r.up.srv, &mcp.Tool{Name: "late", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	waitFor(t, "the steps to be synchronised", func() bool {
		r.guard.mu.Lock()
		defer r.guard.mu.Unlock()
		return len(r.guard.synced) > 0
	})
	r.guard.mu.Lock()
	last := r.guard.synced[len(r.guard.synced)-1]
	r.guard.mu.Unlock()
	got := map[string]string{}
	for _, st := range last {
		got[st.Name] = strings.Join(st.Labels, ",")
	}
	if got["late"] != "sensitive" || got["echo"] != "untrusted" || got["sum"] != "untrusted,egress,destructive" {
		t.Fatalf("synced labels %v", got)
	}
}
