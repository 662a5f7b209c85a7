package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeMapsEveryDoc: the README's map ("Where to read next") links every page of docs/, so a page
// added without a way in fails here.
func TestReadmeMapsEveryDoc(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages, _ := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if len(pages) == 0 {
		t.Fatal("no docs/*.md")
	}
	for _, p := range pages {
		if link := "(docs/" + filepath.Base(p) + ")"; !strings.Contains(string(readme), link) {
			t.Errorf("README.md does not link docs/%s", filepath.Base(p))
		}
	}
}
