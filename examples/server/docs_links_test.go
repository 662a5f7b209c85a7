package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mdLink is a relative Markdown link: target file (may be empty: this file) and anchor.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// anchorOf is GitHub's anchor of a heading: lower case, punctuation other than - and _ dropped, spaces as -.
func anchorOf(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the heading anchors of a Markdown file (outside code blocks).
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	fence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
		}
		if !fence && strings.HasPrefix(line, "#") {
			out[anchorOf(strings.TrimLeft(line, "#"))] = true
		}
	}
	return out
}

// TestDocsLinks: every relative link of the README, BENCHMARKS.md and docs/*.md names a file that exists
// and, for a Markdown file, a heading it has: what moved out of the README (issue 26) is still reachable.
func TestDocsLinks(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	files = append(files, filepath.Join(repoRoot, "README.md"), filepath.Join(repoRoot, "BENCHMARKS.md"))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, f)
		for _, m := range mdLink.FindAllStringSubmatch(string(raw), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			file := f
			if path != "" {
				file = filepath.Join(filepath.Dir(f), path)
				if _, err := os.Stat(file); err != nil {
					t.Errorf("%s: link %s: no such file", rel, target)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(file, ".md") {
				continue
			}
			body, err := os.ReadFile(file)
			if err != nil {
				continue // a directory
			}
			if !anchors(string(body))[anchor] {
				t.Errorf("%s: link %s: no such heading", rel, target)
			}
		}
	}
}
