package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/templates"
)

// guard mcp --template NAME [--set KEY=VALUE]...: controls rendered from the shipped templates, evaluated
// in the gateway (no server), as guard template render renders them. The session of a call is its MCP
// session, and the tools' steps carry the session labels of their annotations (--tool-labels overrides
// them), so that `guard mcp --template rule-of-two -- SERVER` protects any MCP server with no other
// configuration.

// templateNames is the repeatable --template flag.
type templateNames []string

func (t *templateNames) String() string { return strings.Join(*t, ",") }

func (t *templateNames) Set(v string) error {
	v = strings.TrimSpace(v)
	if v == "" {
		return errors.New("must name a template (guard template list shows them)")
	}
	for _, n := range *t {
		if n == v {
			return fmt.Errorf("template %q is given twice", v)
		}
	}
	*t = append(*t, v)
	return nil
}

// mcpTemplateControls renders the templates of --template with the parameters of --set: each --set goes
// to every template that has the parameter; a --set that no template has is an error, as is a template
// parameter problem (every problem is listed). The controls are numbered from 1.
func mcpTemplateControls(ctx context.Context, names []string, sets settings, logger *zap.Logger) ([]guard.Control, error) {
	tpls := make([]*templates.Template, 0, len(names))
	for _, n := range names {
		t, err := findTemplate(n)
		if err != nil {
			return nil, fmt.Errorf("mcp: --template: %w", err)
		}
		tpls = append(tpls, t)
	}
	for _, s := range sets {
		key, _, _ := strings.Cut(s, "=")
		key = strings.TrimSpace(key)
		found := false
		for _, t := range tpls {
			if _, ok := t.Parameter(key); ok {
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("mcp: --set %s: no parameter of that name in %s (guard template show NAME lists them)", key, strings.Join(names, ", "))
		}
	}
	out := make([]guard.Control, 0, len(tpls))
	var probs []string
	for i, t := range tpls {
		var mine settings
		for _, s := range sets {
			key, _, _ := strings.Cut(s, "=")
			if _, ok := t.Parameter(strings.TrimSpace(key)); ok {
				mine = append(mine, s)
			}
		}
		params, err := parseSettings(t, mine)
		if err != nil {
			return nil, fmt.Errorf("mcp: --template %s: %w", t.Name, err)
		}
		r, err := t.Render(ctx, params)
		if err != nil {
			var ve *guard.ValidationError
			if !errors.As(err, &ve) {
				return nil, err
			}
			for _, p := range ve.Problems {
				probs = append(probs, fmt.Sprintf("%s: %s: %s (%s)", t.Name, p.Field, p.Message, p.Code))
			}
			continue
		}
		for _, o := range r.OmittedTests {
			logger.Info("a test of the template does not hold with these parameters; it is left out", zap.String("template", t.Name),
				zap.String("test", o.Name), zap.String("why", o.Message))
		}
		out = append(out, guard.Control{ID: int64(i + 1), Name: t.Name, Data: r.Data})
	}
	if len(probs) > 0 {
		return nil, fmt.Errorf("mcp: --template: %s", strings.Join(probs, "; "))
	}
	return out, nil
}
