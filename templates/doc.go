// Package templates holds guard's control templates: parameterized controls that render, with typed
// parameters, into control data the engine validates, and the library of starter templates guard ships
// (SSN, payment cards, secrets, destructive SQL and shell commands, prompt injection, a tool allow-list,
// spend limits, ...), each with tests that show what it catches and what it lets through.
//
// A template file (library/*.yaml) names its parameters with their types and holds control data in which a
// string "{{name}}" stands for a parameter's value. Substitution works on the decoded JSON tree, never on
// text: a list parameter becomes a JSON list, a number a JSON number, and a string parameter can only ever
// be a JSON string, so no value can inject JSON. Rendering checks every parameter, validates the result with
// guard.ParseControlData against the caller's evaluator registry (problems about substituted values are
// reported under parameters.<name>) and runs the template's tests with the engine's runner.
//
// The server's /api/v1/control-templates routes, `guard template` and the dashboard's "New control" page all
// render through this package, so a template renders the same everywhere. See docs/templates.md.
package templates
