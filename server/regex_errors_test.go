package server

import (
	"strings"
	"testing"
)

// TestRegexErrorsDoNotEchoThePattern: invalid patterns (for RE2, for the backtracking engine, and in
// scope.step_name_regex) give a 422 naming the field and the kind of error, never a fragment of the
// pattern (contract: values are never echoed).
func TestRegexErrorsDoNotEchoThePattern(t *testing.T) {
	ts := newTS(t)
	tests := []struct {
		name, pattern string
		stepNameRegex bool
		fragments     []string // none may appear in the body
		kind          string   // the message names the kind of error
	}{
		{"undefined group name", `(?<zqgroupone>a)\k<zqgrouptwo>`, false, []string{"zqgroupone", "zqgrouptwo"}, "undefined group name"},
		{"unknown property", `(?=a)\p{Zqprop}`, false, []string{"Zqprop"}, "unknown Unicode category"},
		{"missing paren after a named group", `(?=a)(?<zqname>b`, false, []string{"zqname", "(?<"}, "missing closing"},
		{"reversed range", `(?=a)[zq-aq]`, false, []string{"zq-a", "[z"}, "reverse order"},
		{"incomplete property", `(?=a)\p{Zqprop`, false, []string{"Zqprop"}, "escape"},
		{"undefined back-reference number", `(?=a)(b)\7`, false, []string{`\7`}, "undefined group number"},
		{"unrecognized grouping", `(?=a)(?zq)`, false, []string{"(?zq", "zq)"}, "grouping"},
		{"RE2 missing paren", `zqsecret(abc`, false, []string{"zqsecret", "(abc"}, "missing closing"},
		{"RE2 bad repeat", `zqsecret{2,1}`, false, []string{"zqsecret", "{2,1}"}, "repeat"},
		{"step_name_regex missing paren", `zqstep(name`, true, []string{"zqstep", "(name"}, "missing closing"},
		{"step_name_regex look-ahead", `zqstep(?=x)`, true, []string{"zqstep", "(?="}, "Perl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := regexData("ok", "deny")
			field := "data.condition.evaluator.config.pattern"
			if tt.stepNameRegex {
				data["scope"] = map[string]any{"step_name_regex": tt.pattern}
				field = "data.scope.step_name_regex"
			} else {
				data = regexData(tt.pattern, "deny")
			}
			for _, route := range []struct{ method, path string }{{"PUT", "/api/v1/controls"}, {"POST", "/api/v1/controls/validate"}} {
				body := map[string]any{"name": "c-" + strings.ReplaceAll(tt.name, " ", "-"), "data": data}
				if route.method == "POST" {
					body = map[string]any{"data": data}
				}
				r := ts.do(route.method, route.path, body)
				if r.Code != 422 {
					t.Fatalf("%s %s: status %d: %s", route.method, route.path, r.Code, r.Body)
				}
				for _, f := range tt.fragments {
					if strings.Contains(string(r.Body), f) || strings.Contains(string(r.Body), strings.ReplaceAll(f, `\`, `\\`)) {
						t.Errorf("%s %s: the body echoes %q: %s", route.method, route.path, f, r.Body)
					}
				}
				b := r.problem(t)
				found := false
				for _, e := range b.Errors {
					if e.Field == field && strings.Contains(e.Message, tt.kind) {
						found = true
					}
				}
				if !found {
					t.Errorf("%s %s: no error on %s saying %q: %s", route.method, route.path, field, tt.kind, r.Body)
				}
			}
		})
	}
}
