package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// policyWalkthroughDoc is where the walk-through lives since the README became a front door (issue 26).
const policyWalkthroughDoc = "docs/writing-controls.md"

// readmePolicyBlock returns the lines of the first sh block of the "Policy as code" section of
// docs/writing-controls.md (it was the README's): the newcomer's walk-through that TestREADMEPolicyWalkthrough runs.
func readmePolicyBlock(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, policyWalkthroughDoc))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n## Policy as code\n")
	if !ok {
		t.Fatal(policyWalkthroughDoc + ` has no "## Policy as code" section`)
	}
	_, block, ok := strings.Cut(section, "\n```sh\n")
	if !ok {
		t.Fatal(policyWalkthroughDoc + "'s Policy as code section has no sh block")
	}
	block, _, ok = strings.Cut(block, "\n```\n")
	if !ok {
		t.Fatal(policyWalkthroughDoc + "'s Policy as code sh block is not closed")
	}
	return strings.Split(block, "\n")
}

// readmeStep is one command of the walk-through with the output the README shows for it: the comment lines
// that start at the first column right after it ("# " removed), the whole output when there are any.
type readmeStep struct {
	line string   // the command as written, comment included
	cmd  string   // the command without its trailing comment
	want []string // the output the README shows
}

func parseReadmeSteps(lines []string) []readmeStep {
	var steps []readmeStep
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		trimmed := strings.TrimSpace(l)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue // a blank line, a comment before a command, or a comment continued under one
		}
		s := readmeStep{line: l, cmd: l}
		if j := strings.Index(l, " #"); j >= 0 {
			s.cmd = l[:j]
		}
		s.cmd = strings.TrimSpace(s.cmd)
		for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "#") {
			i++
			s.want = append(s.want, strings.TrimPrefix(strings.TrimPrefix(lines[i], "#"), " "))
		}
		steps = append(steps, s)
	}
	return steps
}

// TestREADMEPolicyWalkthrough runs the README's "Policy as code" walk-through as a newcomer would, line by
// line, in a directory holding the repository's examples/policy and the guard binary: validate and test the
// examples, start a server (authentication off, as on a first try), diff, apply, apply again, change the
// file as the README says, diff, apply, export, diff the export. Every output the README shows must be the
// command's whole output, and a line of the block this test does not know fails it: the README and this test
// cannot drift apart. (TestPolicyAsCodeEndToEnd covers the same commands with keys, --dry-run and --prune.)
func TestREADMEPolicyWalkthrough(t *testing.T) {
	bin := buildServer(t)
	steps := parseReadmeSteps(readmePolicyBlock(t))

	// The newcomer's checkout: the example files and, once built, ./guard.
	work := t.TempDir()
	if err := os.MkdirAll(filepath.Join(work, "examples", "policy"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"controls.yaml", "tests.yaml"} {
		b, err := os.ReadFile(filepath.Join(policyExamplesDir, name))
		if err != nil {
			t.Fatal(err)
		}
		writePolicyFile(t, filepath.Join(work, "examples", "policy"), name, string(b))
	}

	var env []string // what the walk-through exported
	var p *proc
	ran := map[string]bool{}
	for _, s := range steps {
		args := strings.Fields(s.cmd)
		switch {
		case s.cmd == "go build -o guard ./examples/server":
			// buildServer ran exactly this build (from examples/server: `go build -o BIN .`).
			if err := os.Symlink(bin, filepath.Join(work, "guard")); err != nil {
				t.Fatal(err)
			}
		case s.cmd == "./guard serve --migrate &":
			p = startServer(t, nil, "serve", "--migrate") // its own empty directory: ./guard.db is new
		case strings.HasPrefix(s.cmd, "export GUARD_URL=http://localhost:8000 "):
			if p == nil {
				t.Fatalf("%q before the server was started", s.line)
			}
			// The server listens on a free port rather than 8000; authentication is off, so no key.
			env = append(env, "GUARD_URL="+p.base)
		case s.cmd == "cp examples/policy/controls.yaml my-policy.yaml && $EDITOR my-policy.yaml":
			// The edit the comment above it describes: a looser pattern for block-ssn; drop-table instead of
			// refund-approval for support-bot.
			b, err := os.ReadFile(filepath.Join(work, "examples", "policy", "controls.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			edited := strings.NewReplacer(
				`pattern: '\b\d{3}-\d{2}-\d{4}\b'`, `pattern: '\b\d{3}[- ]\d{2}[- ]\d{4}\b'`,
				"controls: [block-ssn, refund-approval]", "controls: [block-ssn, drop-table]",
			).Replace(string(b))
			if strings.Count(edited, "[- ]") != 2 || !strings.Contains(edited, "controls: [block-ssn, drop-table]") {
				t.Fatal("examples/policy/controls.yaml changed: update this test's edit")
			}
			writePolicyFile(t, work, "my-policy.yaml", edited)
		case len(args) > 1 && args[0] == "./guard":
			ran[args[1]] = true
			checkReadmeStep(t, work, env, s, args[1:])
		default:
			t.Fatalf("README's Policy as code block has a line this test does not run: %q (update the test)", s.line)
		}
	}
	for _, c := range []string{"validate", "test", "apply", "diff", "export"} {
		if !ran[c] {
			t.Errorf("the README's walk-through does not run guard %s", c)
		}
	}
	if p == nil {
		t.Fatal("the README's walk-through starts no server")
	}
	// What the walk-through applied is in force: the looser pattern denies an SSN written with spaces.
	res := p.call(200, "POST", "/api/v1/evaluation", map[string]any{"agent_name": "support-bot", "stage": "pre",
		"step": map[string]any{"type": "llm", "name": "chat", "input": "my ssn is 123 45 6789"}})
	if res["decision"] != "deny" {
		t.Fatalf("decision after the walk-through: %v", res)
	}
}

// checkReadmeStep runs one ./guard command of the walk-through in work and checks its exit status (2 for a
// diff or a dry run that prints a plan, 0 otherwise) and, when the README shows an output, that it is the
// whole output.
func checkReadmeStep(t *testing.T, work string, env []string, s readmeStep, args []string) {
	t.Helper()
	code, stdout, stderr := guardCLIIn(t, work, env, args...)
	out := stdout + stderr
	want := 0
	if (args[0] == "diff" || strings.Contains(s.cmd, "--dry-run")) && regexp.MustCompile(`(?m)^Plan: `).MatchString(out) {
		want = 2
	}
	if code != want {
		t.Fatalf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", s.cmd, code, want, stdout, stderr)
	}
	if s.want == nil {
		return
	}
	if got := strings.TrimRight(out, "\n"); got != strings.Join(s.want, "\n") {
		t.Fatalf("%s: the output is not the one the README shows\ngot:\n%s\nREADME:\n%s", s.cmd, got, strings.Join(s.want, "\n"))
	}
}
