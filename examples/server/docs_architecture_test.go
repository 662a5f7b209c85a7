package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestArchitectureMapsEveryPackage: docs/architecture.md's table names every package of the module (as
// `path` or `path/`, relative to the module root), so a package added without a line there fails here.
func TestArchitectureMapsEveryPackage(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}", "./...")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/guardrail-control/guard"
	for _, p := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, module), "/")
		if rel == "" {
			continue // the root package: "/ (package guard)"
		}
		if !strings.Contains(string(doc), "`"+rel+"`") && !strings.Contains(string(doc), "`"+rel+"/`") {
			t.Errorf("docs/architecture.md does not name the package %s", rel)
		}
	}
}
