package mcpgateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/guardrail-control/guard"

	"github.com/guardrail-control/guard/internal/strictjson"
)

// syncTimeout bounds one re-listing of the upstream's tools and the registration that follows it.
const syncTimeout = 30 * time.Second

// listTools reads every page of the upstream's tools/list. An upstream without the tools capability has
// none. Tools whose input schema the MCP SDK would refuse to serve are left out with a warning.
//
// raw has the tools as the upstream wrote them, by name, and extra the other fields of its first page
// (see raw.go).
func (g *Gateway) listTools(ctx context.Context) (tools []*mcp.Tool, raw, extra map[string]json.RawMessage, err error) {
	if ir := g.upstream().InitializeResult(); ir == nil || ir.Capabilities == nil || ir.Capabilities.Tools == nil {
		return nil, nil, nil, nil
	}
	var out []*mcp.Tool
	raw = map[string]json.RawMessage{}
	seen := map[string]bool{}
	params := &mcp.ListToolsParams{}
	for range 1000 { // a bound on pages, against an upstream that hands out cursors forever
		pctx, slot := withRawSlot(ctx)
		res, err := g.upstream().ListTools(pctx, params)
		if err != nil {
			return nil, nil, nil, err
		}
		rawToolsOf(slot.raw, raw)
		if params.Cursor == "" {
			extra = rawPageExtra(slot.raw)
		}
		for _, t := range res.Tools {
			if t == nil || t.Name == "" || seen[t.Name] {
				continue
			}
			if err := checkSchema(t); err != nil {
				g.log.Warn("upstream tool left out: the gateway cannot serve it", zap.String("tool", t.Name), zap.Error(err))
				continue
			}
			seen[t.Name] = true
			out = append(out, t)
		}
		if res.NextCursor == "" {
			return out, raw, extra, nil
		}
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
	return nil, nil, nil, fmt.Errorf("more than 1000 pages of tools")
}

// checkSchema refuses what mcp.Server.AddTool would panic on: a missing input schema, or one that is not
// an object schema; and an output schema that is not JSON.
func checkSchema(t *mcp.Tool) error {
	m, err := schemaMap(t.InputSchema)
	if err != nil || m == nil {
		return fmt.Errorf("input schema is missing or not a JSON object")
	}
	if m["type"] != "object" {
		return fmt.Errorf(`input schema must have type "object"`)
	}
	if t.OutputSchema != nil {
		if _, err := json.Marshal(t.OutputSchema); err != nil {
			return fmt.Errorf("output schema is not JSON: %w", err)
		}
	}
	return nil
}

// schemaMap returns a schema as the JSON object guard stores (nil for none).
func schemaMap(s any) (map[string]any, error) {
	switch x := s.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return x, nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := strictjson.UnmarshalLenient(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// stepsOf maps tools to the agent's steps.
func stepsOf(tools []*mcp.Tool) []guard.StepSchema {
	steps := make([]guard.StepSchema, 0, len(tools))
	for _, t := range tools {
		in, _ := schemaMap(t.InputSchema) // checked by listTools
		outSchema, err := schemaMap(t.OutputSchema)
		if err != nil {
			outSchema = nil // an output schema that is not an object (SEP-2106 allows any) is not registered
		}
		steps = append(steps, guard.StepSchema{Type: StepType, Name: t.Name, Description: t.Description,
			InputSchema: in, OutputSchema: outSchema})
	}
	return steps
}

// syncLoop re-lists the tools after each tools/list_changed of the upstream, until Close or the end of
// the upstream connection.
func (g *Gateway) syncLoop() {
	for {
		select {
		case <-g.stop:
			return
		case <-g.done:
			return
		case <-g.sync:
			ctx, cancel := context.WithTimeout(context.Background(), syncTimeout)
			if err := g.Sync(ctx); err != nil {
				g.log.Warn("synchronising the upstream's tools failed", zap.Error(err))
			}
			cancel()
		}
	}
}

// Sync lists the upstream's tools again, updates the tools the gateway serves (clients are sent
// notifications/tools/list_changed when anything changed) and hands the new steps to the Guard. The
// background worker calls it on each tools/list_changed of the upstream. When the listing fails the
// served tools stay as they were; when only the Guard refuses the steps (a strict-mode conflict), the new
// tools are served and checked anyway, and the error says the registration failed.
func (g *Gateway) Sync(ctx context.Context) error {
	g.syncMu.Lock()
	defer g.syncMu.Unlock()
	tools, raw, extra, err := g.listTools(ctx)
	if err != nil {
		return err
	}
	g.mu.Lock()
	old := g.tools
	g.tools, g.rawTools, g.rawExtra = tools, raw, extra
	srv, gd := g.srv, g.gd
	g.mu.Unlock()
	changed := false
	oldByName := make(map[string]*mcp.Tool, len(old))
	for _, t := range old {
		oldByName[t.Name] = t
	}
	var removed []string
	newNames := make(map[string]bool, len(tools))
	for _, t := range tools {
		newNames[t.Name] = true
		if o, ok := oldByName[t.Name]; ok && sameTool(o, t) {
			continue
		}
		changed = true
		if srv != nil {
			g.addTool(srv, t)
		}
	}
	for _, t := range old {
		if !newNames[t.Name] {
			removed = append(removed, g.exposed(t.Name))
		}
	}
	if len(removed) > 0 {
		changed = true
		if srv != nil {
			srv.RemoveTools(removed...)
		}
	}
	if !changed {
		return nil
	}
	g.log.Info("upstream tools changed", zap.Int("tools", len(tools)), zap.Strings("removed", removed))
	if gd == nil {
		return nil
	}
	if err := gd.SyncSteps(ctx, g.labelledSteps(tools)); err != nil {
		return fmt.Errorf("register the new steps: %w", err)
	}
	return nil
}

// sameTool compares two tool definitions by their JSON.
func sameTool(a, b *mcp.Tool) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}
