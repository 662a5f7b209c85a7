package ui

import (
	"io/fs"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestDashboardFilesDocumented: docs/dashboard.md's table of files names exactly the files the binary embeds,
// so a page added (or removed) without its line in the table fails here.
func TestDashboardFilesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/dashboard.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "| file | what it is |")
	if !ok {
		t.Fatal("docs/dashboard.md has no table of files (| file | what it is |)")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("`([A-Za-z0-9_.-]+\\.(?:js|css|html))`").FindAllStringSubmatch(table, -1) {
		documented[m[1]] = true
	}
	var embedded []string
	_ = fs.WalkDir(assets, "static", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			embedded = append(embedded, strings.TrimPrefix(path, "static/"))
		}
		return err
	})
	sort.Strings(embedded)
	for _, f := range embedded {
		if !documented[f] {
			t.Errorf("server/ui/static/%s is not in docs/dashboard.md's table of files", f)
		}
		delete(documented, f)
	}
	for f := range documented {
		t.Errorf("docs/dashboard.md's table names %s, which the dashboard does not have", f)
	}
}
