package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runPolicyCmd runs a registered command in-process and returns its exit status and outputs.
func runPolicyCmd(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runPolicyCmdStdin(t, env, "", args...)
}

// runPolicyCmdStdin is runPolicyCmd with stdin as the standard input.
func runPolicyCmdStdin(t *testing.T, env map[string]string, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd, ok := commands[args[0]]
	if !ok {
		t.Fatalf("no command %q", args[0])
	}
	e := &commandEnv{getenv: func(k string) string { return env[k] }, stdin: strings.NewReader(stdin), stdout: &out, stderr: &errOut}
	err := cmd.run(context.Background(), e, args[1:])
	code = exitStatus(err)
	if err != nil && code == 1 && !strings.HasPrefix(err.Error(), "exit status") {
		errOut.WriteString("guard: " + err.Error() + "\n")
	}
	return code, out.String(), errOut.String()
}

func writePolicyFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const policyExamplesDir = "../policy"

func TestValidateStandardInput(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(policyExamplesDir, "controls.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runPolicyCmdStdin(t, nil, string(raw), "validate", "-f", "-", "-f", filepath.Join(policyExamplesDir, "tests.yaml"))
	if code != 0 || !strings.Contains(stdout, "ok: 2 files valid (3 controls, 2 agents, 5 tests)") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, _ = runPolicyCmdStdin(t, nil, "controls:\n  - {name: x}\n", "validate", "-f", "-")
	if code != 1 || !strings.Contains(stdout, `<stdin>: control "x": controls.0.data: is required`) {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
}

func TestValidateAndTestCommands(t *testing.T) {
	dir := t.TempDir()
	controls := filepath.Join(policyExamplesDir, "controls.yaml")
	tests := filepath.Join(policyExamplesDir, "tests.yaml")
	bad := writePolicyFile(t, dir, "bad.yaml", "controls:\n  - name: x\n    data: {condition: {selector: {path: input}, evaluator: {name: regex, config: {patern: a}}}, action: {decision: dny}}\n")
	failing := writePolicyFile(t, dir, "failing.yaml", `tests:
  - name: wrong on purpose
    step: {type: llm, name: chat, input: "ssn 123-45-6789"}
    stage: pre
    expect: {decision: allow, no_matches: [block-ssn]}
  - name: right
    control: block-ssn
    step: {type: llm, name: chat, input: "ssn 123-45-6789"}
    stage: pre
    expect: match
`)
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout []string // substrings, in order
		stderr string
	}{
		{"validate examples", []string{"validate", "-f", controls, "-f", tests}, 0, []string{"ok: 2 files valid (3 controls, 2 agents, 5 tests)"}, ""},
		{"validate positional files", []string{"validate", "-f", controls, tests}, 0, []string{"ok: 2 files valid"}, ""},
		{"validate flags after files", []string{"validate", controls, "-f", tests}, 0, []string{"ok: 2 files valid"}, ""},
		{"validate standard input twice", []string{"validate", "-f", "-", "-f", "-"}, 1, nil, "standard input (-) can be given once"},
		{"validate bad file", []string{"validate", "-f", bad}, 1, []string{
			bad + `: control "x": controls.0.data.condition.evaluator.config.patern: `,
			bad + `: control "x": controls.0.data.action.decision: `,
			"FAIL: 3 problems"}, ""},
		{"validate missing file", []string{"validate", "-f", filepath.Join(dir, "missing.yaml")}, 1, nil, "no such file"},
		{"validate no file", []string{"validate"}, 2, nil, "usage: guard validate"},
		{"validate bad flag", []string{"validate", "--bogus"}, 2, nil, "usage: guard validate"},
		{"test examples", []string{"test", "-f", controls, "-t", tests}, 0, []string{"ok\t5 tests passed"}, ""},
		{"test verbose", []string{"test", "-v", "-f", controls, "-t", tests}, 0, []string{"--- PASS: an ssn in a prompt is denied", "ok\t5 tests passed"}, ""},
		{"test run filter", []string{"test", "-f", controls, "-t", tests, "-run", "refund"}, 0, []string{"ok\t2 tests passed"}, ""},
		{"test failure", []string{"test", "-f", controls, "-t", failing}, 1, []string{
			"--- FAIL: wrong on purpose (" + failing + ")",
			"    decision: expected allow, got deny (matched: block-ssn (deny))",
			"    control block-ssn: expected no_match, got match",
			"FAIL\t1 of 2 tests failed"}, ""},
		{"test without controls", []string{"test", "-t", tests}, 2, nil, "no controls file"},
		{"test tests that name unknown controls", []string{"test", "-f", bad, "-t", tests}, 1, []string{"FAIL: "}, ""},
		{"test bad -run", []string{"test", "-f", controls, "-run", "("}, 2, nil, "-run"},
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
			if !strings.Contains(stderr, c.stderr) {
				t.Fatalf("stderr lacks %q:\n%s", c.stderr, stderr)
			}
		})
	}
}
