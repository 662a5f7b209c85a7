package evaluator

import "fmt"

// packages are the evaluators that live in packages of their own: a program has them only when it
// imports the package (the guard server binary imports them all). Names are those the packages register.
var packages = map[string]string{
	"pii":           "github.com/guardrail-control/guard/evaluator/pii",
	"secrets":       "github.com/guardrail-control/guard/evaluator/secrets",
	"sql":           "github.com/guardrail-control/guard/evaluator/sqlguard",
	"json":          "github.com/guardrail-control/guard/evaluator/jsonvalidate",
	"prompt_attack": "github.com/guardrail-control/guard/evaluator/promptattack",
	"ext.toxicity":  "github.com/guardrail-control/guard/evaluator/toxicity",
}

// MissingHint says how to get evaluator name into a program that does not have it, for the messages
// about a control naming it: the blank import of its package (and, for an external evaluator, what it
// needs at run time), or "" for a name guard does not ship. r is the registry the name was looked up in:
// a package that registered its evaluator but left it unavailable gets the run-time condition only.
func MissingHint(r *Registry, name string) string {
	pkg, ok := packages[name]
	if !ok {
		return ""
	}
	registered := false
	if r != nil {
		r.mu.RLock()
		_, registered = r.factories[name]
		r.mu.RUnlock()
	}
	if name == "ext.toxicity" {
		if registered {
			return "set EXT_API_KEY (the moderation service's key) to make it available"
		}
		return fmt.Sprintf("add import _ %q to the program and set EXT_API_KEY", pkg)
	}
	return fmt.Sprintf("add import _ %q to the program to register it", pkg)
}
