package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client/policyfile"
	"github.com/guardrail-control/guard/evaluator"
	"github.com/guardrail-control/guard/templates"
)

const templateUsage = "guard template list | show NAME [-o text|json] | render NAME [--set KEY=VALUE]... [--name CONTROL] [-o yaml|json|data]"

func init() {
	register(&command{name: "template", summary: "list, show and render control templates offline (render prints a policy file for guard apply)",
		usage: templateUsage, run: runTemplate})
}

// runTemplate is `guard template SUBCOMMAND`: no server, no key; the templates are those this binary ships
// whose evaluators it has (the server offers the same ones).
func runTemplate(ctx context.Context, env *commandEnv, args []string) error {
	if len(args) == 0 {
		fmt.Fprintf(env.stderr, "usage: %s\n", templateUsage)
		return &exitError{code: 2}
	}
	switch args[0] {
	case "list":
		return templateList(env, args[1:])
	case "show":
		return templateShow(env, args[1:])
	case "render":
		return templateRender(ctx, env, args[1:])
	case "-h", "-help", "--help", "help":
		fmt.Fprintf(env.stdout, "usage: %s\n", templateUsage)
		return nil
	}
	fmt.Fprintf(env.stderr, "guard template: unknown subcommand %q\nusage: %s\n", args[0], templateUsage)
	return &exitError{code: 2}
}

// availableTemplates are the shipped templates whose evaluators this binary registers.
func availableTemplates() []*templates.Template {
	return templates.Shipped().Available(func(name string) bool {
		_, ok := evaluator.Default.Lookup(name)
		return ok
	})
}

func findTemplate(name string) (*templates.Template, error) {
	for _, t := range availableTemplates() {
		if t.Name == name {
			return t, nil
		}
	}
	return nil, fmt.Errorf("no template named %q (guard template list shows them)", name)
}

func templateList(env *commandEnv, args []string) error {
	fs := flag.NewFlagSet("template list", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	if _, err := parsePolicyFlags(fs, "guard template list", args); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tCATEGORY\tTITLE")
	for _, t := range availableTemplates() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, t.Category, t.Title)
	}
	return tw.Flush()
}

func templateShow(env *commandEnv, args []string) error {
	fs := flag.NewFlagSet("template show", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	format := fs.String("o", "text", "output: text, or json (the template as GET /control-templates/{name} answers it)")
	pos, err := parsePolicyFlags(fs, "guard template show NAME [-o text|json]", args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageFail(fs, "one template name is required")
	}
	t, err := findTemplate(pos[0])
	if err != nil {
		return err
	}
	switch *format {
	case "json":
		out := map[string]any{"name": t.Name, "title": t.Title, "description": t.Description, "category": t.Category,
			"evaluators": t.Evaluators(), "parameters": t.Parameters, "data_template": t.Data}
		return writeJSON(env, out)
	case "text":
	default:
		return usageFail(fs, "-o must be text or json")
	}
	fmt.Fprintf(env.stdout, "%s: %s\ncategory: %s; evaluators: %s\n\n%s\n\nparameters:\n", t.Name, t.Title, t.Category,
		strings.Join(t.Evaluators(), ", "), t.Description)
	for _, p := range t.Parameters {
		var about []string
		if p.Required {
			about = append(about, "required")
		}
		if p.Default != nil {
			about = append(about, "default "+compactJSON(p.Default))
		}
		if p.Example != nil {
			about = append(about, "example "+compactJSON(p.Example))
		}
		if len(p.Values) > 0 {
			about = append(about, "one of "+strings.Join(p.Values, ", "))
		}
		if p.Minimum != nil {
			about = append(about, "minimum "+compactJSON(*p.Minimum))
		}
		if p.Maximum != nil {
			about = append(about, "maximum "+compactJSON(*p.Maximum))
		}
		fmt.Fprintf(env.stdout, "  %s (%s)", p.Name, p.Type)
		if len(about) > 0 {
			fmt.Fprintf(env.stdout, " [%s]", strings.Join(about, "; "))
		}
		fmt.Fprintf(env.stdout, "\n      %s\n", p.Description)
	}
	return nil
}

// settings is the repeatable --set KEY=VALUE flag, in the order given.
type settings []string

func (s *settings) String() string { return strings.Join(*s, " ") }

func (s *settings) Set(v string) error {
	if k, _, ok := strings.Cut(v, "="); !ok || strings.TrimSpace(k) == "" {
		return errors.New("must be KEY=VALUE")
	}
	*s = append(*s, v)
	return nil
}

func templateRender(ctx context.Context, env *commandEnv, args []string) error {
	fs := flag.NewFlagSet("template render", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	var sets settings
	fs.Var(&sets, "set", "a parameter: KEY=VALUE (a list as a,b,c or a JSON list; repeat --set to add items); repeat for each parameter")
	name := fs.String("name", "", "the control's name in the policy file (default: the template's name)")
	format := fs.String("o", "yaml", "output: yaml or json (a policy file with the control, for guard apply), or data (the control data only)")
	pos, err := parsePolicyFlags(fs, "guard template render NAME [--set KEY=VALUE]... [--name CONTROL] [-o yaml|json|data]", args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageFail(fs, "one template name is required")
	}
	if *format != "yaml" && *format != "json" && *format != "data" {
		return usageFail(fs, "-o must be yaml, json or data")
	}
	t, err := findTemplate(pos[0])
	if err != nil {
		return err
	}
	control := t.Name
	if *name != "" {
		control = *name
	}
	if err := guard.ValidateControlName(control); err != nil {
		return fmt.Errorf("--name: %w", err)
	}
	params, err := parseSettings(t, sets)
	if err != nil {
		return err
	}
	r, err := t.Render(ctx, params)
	if err != nil {
		var ve *guard.ValidationError
		if !errors.As(err, &ve) {
			return err
		}
		for _, p := range ve.Problems {
			fmt.Fprintf(env.stderr, "guard template render %s: %s: %s (%s)\n", t.Name, p.Field, p.Message, p.Code)
		}
		return &exitError{code: 1}
	}
	for _, o := range r.OmittedTests {
		fmt.Fprintf(env.stderr, "note: the template's test %q is left out: %s\n", o.Name, o.Message)
	}
	switch *format {
	case "data":
		return writeJSON(env, r.Data)
	case "json":
		return writeJSON(env, map[string]any{"controls": []any{map[string]any{"name": control, "data": r.Data}}})
	}
	return policyfile.Write(env.stdout, &policyfile.Policy{Controls: []policyfile.Control{{Name: control, Data: r.Data}}})
}

// parseSettings turns --set flags into parameter values of each parameter's type. A list parameter set
// several times gets the items of each; any other parameter set twice is an error. A name the template does
// not have is passed on, so that Render reports it with the other problems.
func parseSettings(t *templates.Template, sets settings) (map[string]any, error) {
	params := map[string]any{}
	for _, s := range sets {
		key, text, _ := strings.Cut(s, "=")
		key = strings.TrimSpace(key)
		p, ok := t.Parameter(key)
		if !ok {
			params[key] = text
			continue
		}
		v := p.ParseSetting(text)
		prev, dup := params[key]
		switch {
		case !dup:
			params[key] = v
		case p.Type == templates.TypeStringList:
			a, aok := prev.([]any)
			b, bok := v.([]any)
			if !aok || !bok {
				params[key] = v // not a list: Render reports the type
				continue
			}
			params[key] = append(a, b...)
		default:
			return nil, fmt.Errorf("--set %s is given twice", key)
		}
	}
	return params, nil
}

func writeJSON(env *commandEnv, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(env.stdout, "%s\n", b)
	return err
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
