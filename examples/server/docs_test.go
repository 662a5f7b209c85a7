package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the generated environment table of docs/operations.md")

const (
	envBegin = "<!-- BEGIN environment table: generated from examples/server/config.go by `go test ./examples/server -run TestOperationsDoc -update-docs` -->"
	envEnd   = "<!-- END environment table -->"
)

// envMarkdown renders the config table as the Markdown table of docs/operations.md.
func envMarkdown() string {
	var b strings.Builder
	b.WriteString("| variable | default | meaning |\n|---|---|---|\n")
	for _, ev := range envVars {
		name := "`" + ev.name + "`"
		for _, a := range ev.aliases {
			name += " (or `" + a + "`)"
		}
		def := "–"
		if ev.def != "" || ev.defText != "" {
			def = "`" + ev.defaultText() + "`"
			if ev.defText != "" && ev.def == "" {
				def = ev.defText
			}
		}
		b.WriteString("| " + name + " | " + def + " | " + strings.ReplaceAll(ev.desc, "|", `\|`) + " |\n")
	}
	return b.String()
}

// TestOperationsDoc: the environment table of docs/operations.md is the config table (regenerate it with
// -update-docs), and the docs/service.md's configuration table names every variable and no other.
func TestOperationsDoc(t *testing.T) {
	path := filepath.Join(repoRoot, "docs", "operations.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, envBegin), strings.Index(doc, envEnd)
	if i < 0 || j < i {
		t.Fatalf("docs/operations.md lacks the markers of the environment table")
	}
	want := doc[:i+len(envBegin)] + "\n" + envMarkdown() + doc[j:]
	if want != doc {
		if *updateDocs {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Log("docs/operations.md: environment table rewritten")
		} else {
			t.Errorf("docs/operations.md's environment table differs from config.go's envVars: run go test ./examples/server -run TestOperationsDoc -update-docs")
		}
	}
	for _, name := range commandNames() {
		if !strings.Contains(doc, "guard "+name) {
			t.Errorf("docs/operations.md does not mention guard %s", name)
		}
	}

	// The configuration table moved from the README to docs/service.md with the front door (issue 26).
	readme, err := os.ReadFile(filepath.Join(repoRoot, "docs", "service.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## Configuration\n")
	if !ok {
		t.Fatal("docs/service.md has no Configuration section")
	}
	section, _, _ = strings.Cut(section, "\n#")
	inREADME := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\| (.*?) \|`).FindAllStringSubmatch(section, -1) {
		for _, n := range regexp.MustCompile("`([A-Z][A-Z0-9_]+)`").FindAllStringSubmatch(m[1], -1) {
			inREADME[n[1]] = true
			if !configNames()[n[1]] {
				t.Errorf("docs/service.md's configuration table lists %s, which the server does not read", n[1])
			}
		}
	}
	for name := range configNames() {
		if !inREADME[name] {
			t.Errorf("docs/service.md's configuration table does not list %s", name)
		}
	}
}
