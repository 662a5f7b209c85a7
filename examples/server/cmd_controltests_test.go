package main

import (
	"strings"
	"testing"
)

// TestControlTestsInPolicyFiles: the tests a control carries in its data (and its mode) are part of a
// policy file; guard validate and guard test run them with the server's runner.
func TestControlTestsInPolicyFiles(t *testing.T) {
	dir := t.TempDir()
	good := writePolicyFile(t, dir, "good.yaml", `controls:
  - name: block-secret
    data:
      mode: shadow
      condition: {selector: {path: input}, evaluator: {name: regex, config: {pattern: secret}}}
      action: {decision: deny}
      tests:
        - {name: finds it, step: {type: llm, name: chat, input: "a secret"}, stage: pre, expect: match}
        - {name: denies, step: {type: llm, name: chat, input: "a secret"}, stage: pre, expect: {decision: deny}}
        - {name: clean, step: {type: llm, name: chat, input: "hello"}, stage: pre, expect: no_match}
`)
	bad := writePolicyFile(t, dir, "bad.yaml", `controls:
  - name: block-secret
    data:
      condition: {selector: {path: input}, evaluator: {name: regex, config: {pattern: secret}}}
      action: {decision: deny}
      tests:
        - {name: wrong, step: {type: llm, name: chat, input: "a secret"}, stage: pre, expect: no_match}
`)
	malformed := writePolicyFile(t, dir, "malformed.yaml", `controls:
  - name: x
    data:
      mode: sometimes
      condition: {selector: {path: input}, evaluator: {name: regex, config: {pattern: secret}}}
      action: {decision: deny}
      tests:
        - {name: a, step: {type: llm}, stage: during, expect: match}
`)
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout []string
	}{
		{"validate runs them", []string{"validate", "-f", good}, 0, []string{"ok: 1 file valid (1 control"}},
		{"validate fails on a failing test", []string{"validate", "-f", bad}, 1, []string{
			bad + ": control block-secret: data.tests.0: test failed: expected no match; the control matched (decision deny)"}},
		{"validate names bad fields", []string{"validate", "-f", malformed}, 1, []string{"controls.0.data.mode", "controls.0.data.tests.0.stage"}},
		{"test runs them", []string{"test", "-v", "-f", good}, 0, []string{"--- PASS: block-secret/finds it", "--- PASS: block-secret/denies", "ok\t3 tests passed"}},
		{"test -run", []string{"test", "-f", good, "-run", "clean"}, 0, []string{"ok\t1 test passed"}},
		{"test failure", []string{"test", "-f", bad}, 1, []string{"--- FAIL: block-secret/wrong (" + bad + ")",
			"    data.tests.0: expected no match; the control matched (decision deny)", "FAIL\t1 of 1 test failed"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runPolicyCmd(t, nil, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, stdout, stderr)
			}
			rest := stdout
			for _, s := range c.stdout {
				i := strings.Index(rest, s)
				if i < 0 {
					t.Fatalf("stdout lacks %q (in order):\n%s", s, stdout)
				}
				rest = rest[i+len(s):]
			}
		})
	}
}
