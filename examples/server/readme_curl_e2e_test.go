package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readmeCurlBlock returns the sh block of the README's "A first control with curl" section.
func readmeCurlBlock(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n## A first control with curl\n")
	if !ok {
		t.Fatal(`README.md has no "## A first control with curl" section`)
	}
	_, block, ok := strings.Cut(section, "\n```sh\n")
	if !ok {
		t.Fatal("the README's curl section has no sh block")
	}
	block, _, ok = strings.Cut(block, "\n```\n")
	if !ok {
		t.Fatal("the README's curl block is not closed")
	}
	return block
}

// TestREADMECurlWalkthrough runs the README's curl block with bash against a fresh server, as a newcomer
// would after `go run ./examples/server serve --migrate` (only the URL is the test server's), and requires
// every answer the README shows (up to its first "…") in the output, in order; the last command, the audit
// trail, must show the control's changes.
func TestREADMECurlWalkthrough(t *testing.T) {
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is needed by the README's walk-through", tool)
			}
			t.Skipf("%s not found", tool)
		}
	}
	block := readmeCurlBlock(t)
	const local = "API=http://localhost:8000/api/v1"
	if !strings.Contains(block, local) {
		t.Fatalf("the README's curl block does not start with %s", local)
	}
	p := startServer(t, map[string]string{"DB_URL": filepath.Join(t.TempDir(), "guard.db")}, "serve", "--migrate")
	script := strings.Replace(block, local, "API="+p.base+"/api/v1", 1)
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's curl block failed: %v\n%s", err, out)
	}
	rest := string(out)
	n := 0
	for _, line := range strings.Split(block, "\n") {
		want, ok := strings.CutPrefix(line, "# {")
		if !ok {
			continue
		}
		want, _, _ = strings.Cut("{"+want, "…")
		i := strings.Index(rest, want)
		if i < 0 {
			t.Fatalf("the output lacks %q (in order):\n%s", want, out)
		}
		rest = rest[i+len(want):]
		n++
	}
	if n < 4 {
		t.Fatalf("only %d answers checked", n)
	}
	for _, want := range []string{`"action":"control.data_replaced"`, `"action":"control.created"`} {
		if !strings.Contains(rest, want) {
			t.Errorf("the audit trail lacks %s:\n%s", want, rest)
		}
	}
}
