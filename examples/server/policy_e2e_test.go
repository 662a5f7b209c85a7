package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// guardCLI runs the guard binary with env (over no GUARD_URL and no GUARD_API_KEY) and returns its exit status
// and outputs.
func guardCLI(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return guardCLIIn(t, "", env, args...)
}

// guardCLIIn is guardCLI run in the directory dir ("": the test's working directory).
func guardCLIIn(t *testing.T, dir string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	bin := buildServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GUARD_URL=", "GUARD_API_KEY="), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("run guard %v: %v", args, err)
	}
	return code, out.String(), errOut.String()
}

// expectGuard runs the binary and checks the exit status and that stdout+stderr hold every want, in order.
func expectGuard(t *testing.T, env []string, wantCode int, want []string, args ...string) string {
	t.Helper()
	code, stdout, stderr := guardCLI(t, env, args...)
	all := stdout + stderr
	if code != wantCode {
		t.Fatalf("guard %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, wantCode, stdout, stderr)
	}
	rest := all
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("guard %s: output lacks %q (in order):\n%s", strings.Join(args, " "), w, all)
		}
		rest = rest[i+len(w):]
	}
	return stdout
}

// The "Policy as code" walk-through (docs/writing-controls.md, once the README's) against a real server process: validate and test offline,
// apply, change the file, diff, apply again, export, prune; with the exit statuses, idempotence and the
// messages for a missing or insufficient key and an unreachable server.
func TestPolicyAsCodeEndToEnd(t *testing.T) {
	controls, _ := filepath.Abs(filepath.Join(policyExamplesDir, "controls.yaml"))
	tests, _ := filepath.Abs(filepath.Join(policyExamplesDir, "tests.yaml"))

	// Offline: no server, no key.
	expectGuard(t, nil, 0, []string{"ok: 2 files valid (3 controls, 2 agents, 5 tests)"}, "validate", "-f", controls, "-f", tests)
	expectGuard(t, nil, 0, []string{"ok\t5 tests passed"}, "test", "-f", controls, "-t", tests)

	p := startServer(t, map[string]string{"DB_URL": filepath.Join(t.TempDir(), "guard.db"), "GUARD_API_KEY_ENABLED": "true",
		"GUARD_API_KEYS": "regular-secret-key", "GUARD_ADMIN_API_KEYS": "admin-secret-key"}, "serve", "--migrate")
	url := []string{"GUARD_URL=" + p.base}
	admin := append(url, "GUARD_API_KEY=admin-secret-key")
	regular := append(url, "GUARD_API_KEY=regular-secret-key")

	// Keys: the message says which key is needed and never prints one.
	out := expectGuard(t, url, 1, []string{"requires an API key: set GUARD_API_KEY to a key"}, "diff", "-f", controls)
	refused := expectGuard(t, regular, 1, []string{"not allowed to change policy", "set it to an admin key"}, "apply", "-f", controls)
	if strings.Contains(refused, "+ control") || strings.Contains(refused, "Plan:") {
		t.Errorf("apply with a regular key printed the plan it could not apply:\n%s", refused)
	}
	out += refused
	out += expectGuard(t, append(url, "GUARD_API_KEY=wrong-secret-key"), 1, []string{"does not accept the key in GUARD_API_KEY"}, "export")
	_, _, stderr := guardCLI(t, regular, "apply", "-f", controls)
	if strings.Contains(out+stderr, "secret-key") {
		t.Fatalf("a key was printed:\n%s%s", out, stderr)
	}
	// A regular key reads: diff works with it.
	expectGuard(t, regular, 2, []string{"+ control block-ssn (create)", "+ agent support-bot (create, no steps)",
		"Plan: 3 controls to create, 0 to update, 0 to delete; 2 agents to change."}, "diff", "-f", controls)

	// Apply, then apply again: nothing to do.
	expectGuard(t, admin, 0, []string{"created control block-ssn", "created agent support-bot", "linked block-ssn to agent support-bot", "Applied."},
		"apply", "-f", controls)
	expectGuard(t, admin, 0, []string{"No changes: the server matches the files."}, "apply", "-f", controls)
	expectGuard(t, admin, 0, []string{"No changes"}, "diff", "-f", controls)
	if got := p.evalWithKey(t, "admin-secret-key", "support-bot", "my ssn is 123-45-6789"); got != "deny" {
		t.Fatalf("decision after apply: %s", got)
	}

	// Change the file: a new pattern, drop-table disabled, support-bot's links moved.
	raw, err := os.ReadFile(controls)
	if err != nil {
		t.Fatal(err)
	}
	changedText := strings.NewReplacer(
		`pattern: '\b\d{3}-\d{2}-\d{4}\b'`, `pattern: '\b\d{3}[- ]\d{2}[- ]\d{4}\b'`,
		"      action: {decision: deny}\n\nagents:", "      action: {decision: deny}\n      enabled: false\n\nagents:",
		"controls: [block-ssn, refund-approval]", "controls: [block-ssn, drop-table]",
	).Replace(string(raw))
	if changedText == string(raw) {
		t.Fatal("the example file changed: update this test's edits")
	}
	changed := writePolicyFile(t, t.TempDir(), "controls.yaml", changedText)
	expectGuard(t, admin, 0, []string{"ok: 1 file valid"}, "validate", "-f", changed)
	diffWant := []string{
		"~ control block-ssn (id 1, version 1)",
		`    ~ data.condition.evaluator.config.pattern: "\\b\\d{3}-\\d{2}-\\d{4}\\b" -> "\\b\\d{3}[- ]\\d{2}[- ]\\d{4}\\b"`,
		"~ control drop-table (id 2, version 1)",
		"    ~ enabled: true -> false",
		"~ agent support-bot",
		"    + link drop-table",
		"    - link refund-approval",
		"Plan: 0 controls to create, 2 to update, 0 to delete; 1 agent to change.",
	}
	expectGuard(t, admin, 2, diffWant, "diff", "-f", changed)
	expectGuard(t, admin, 2, diffWant, "apply", "--dry-run", "-f", changed)
	expectGuard(t, admin, 2, diffWant, "diff", "-f", changed) // the dry run changed nothing
	expectGuard(t, admin, 0, []string{"updated control block-ssn (version 2)", "disabled control drop-table (version 2)",
		"linked drop-table to agent support-bot", "unlinked refund-approval from agent support-bot", "Applied."}, "apply", "-f", changed)
	expectGuard(t, admin, 0, []string{"No changes"}, "apply", "-f", changed)
	if got := p.evalWithKey(t, "admin-secret-key", "support-bot", "my ssn is 123 45 6789"); got != "deny" {
		t.Fatalf("decision with the new pattern: %s", got)
	}

	// Export: the same file format, deterministic, and applying it changes nothing.
	dir := t.TempDir()
	exported := filepath.Join(dir, "exported.yaml")
	expectGuard(t, admin, 0, []string{"wrote 3 controls and 2 agents to " + exported}, "export", "-o", exported)
	stdoutExport := expectGuard(t, regular, 0, nil, "export")
	fileExport, err := os.ReadFile(exported)
	if err != nil || string(fileExport) != stdoutExport {
		t.Fatalf("export -o and export to stdout differ (%v):\n%s\n---\n%s", err, fileExport, stdoutExport)
	}
	expectGuard(t, admin, 0, []string{"ok: 1 file valid (3 controls, 2 agents, 0 tests)"}, "validate", "-f", exported)
	expectGuard(t, admin, 0, []string{"No changes"}, "diff", "-f", exported)
	expectGuard(t, admin, 0, []string{"No changes"}, "apply", "--prune", "-f", exported)
	// export | apply -f - round-trips.
	pipe := exec.Command(buildServer(t), "apply", "--prune", "-f", "-")
	pipe.Env = append(os.Environ(), admin...)
	pipe.Stdin = strings.NewReader(stdoutExport)
	if out, err := pipe.CombinedOutput(); err != nil || !strings.Contains(string(out), "No changes: the server matches the files.") {
		t.Fatalf("export | apply -f -: %v\n%s", err, out)
	}

	// Prune: a file without drop-table deletes it (and unlinks it) only with --prune.
	pruned := writePolicyFile(t, dir, "pruned.yaml", strings.NewReplacer(
		"controls: [block-ssn, drop-table]", "controls: [block-ssn]",
		"controls: [drop-table]", "controls: []",
	).Replace(changedText[:strings.Index(changedText, "  - name: drop-table")]+changedText[strings.Index(changedText, "agents:"):]))
	expectGuard(t, admin, 2, []string{"~ agent analytics-bot", "    - link drop-table", "~ agent support-bot", "    - link drop-table",
		"Plan: 0 controls to create, 0 to update, 0 to delete; 2 agents to change."}, "diff", "-f", pruned)
	expectGuard(t, admin, 2, []string{"- control drop-table (id 2, delete; linked to 2 agents now)",
		"Plan: 0 controls to create, 0 to update, 1 to delete; 2 agents to change."}, "diff", "--prune", "-f", pruned)
	expectGuard(t, admin, 0, []string{"deleted control drop-table", "Applied."}, "apply", "--prune", "-f", pruned)
	expectGuard(t, admin, 0, []string{"No changes"}, "apply", "--prune", "-f", pruned)
	if list := p.getWithKey(t, "admin-secret-key", "/api/v1/controls?name=drop-table"); strings.Contains(list, `"drop-table"`) {
		t.Fatalf("drop-table still listed: %s", list)
	}

	// Bad input: usage errors exit 2, an unreachable server names its URL, an invalid file exits 1.
	expectGuard(t, admin, 2, []string{"usage: guard apply"}, "apply")
	expectGuard(t, admin, 2, []string{"usage: guard diff"}, "diff", "--no-such-flag", "-f", controls)
	expectGuard(t, nil, 1, []string{"cannot reach the guard server at http://127.0.0.1:1"}, "diff", "--server", "http://127.0.0.1:1", "-f", controls)
	bad := writePolicyFile(t, dir, "bad.yaml", "controls:\n  - name: x\n    data: {condition: {selector: {path: input}}, action: {decision: deny}}\n    extra: 1\n")
	expectGuard(t, admin, 1, []string{bad + ": controls.0.extra: unknown field", "FAIL: "}, "apply", "-f", bad)
}

// evalWithKey evaluates an llm step of agent at the pre stage and returns the decision.
func (p *proc) evalWithKey(t *testing.T, key, agent, input string) string {
	t.Helper()
	code, _, body := p.do("POST", "/api/v1/evaluation", map[string]any{"agent_name": agent, "stage": "pre",
		"step": map[string]any{"type": "llm", "name": "chat", "input": input}}, map[string]string{"X-API-Key": key})
	if code != 200 {
		t.Fatalf("evaluation: %d %s", code, body)
	}
	var res struct {
		Decision string `json:"decision"`
	}
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatal(err)
	}
	return res.Decision
}

// getWithKey is a GET with a key; it returns the body.
func (p *proc) getWithKey(t *testing.T, key, path string) string {
	t.Helper()
	code, _, body := p.do("GET", path, nil, map[string]string{"X-API-Key": key})
	if code != 200 {
		t.Fatalf("GET %s: %d %s", path, code, body)
	}
	return string(body)
}
