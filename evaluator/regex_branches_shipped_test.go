package evaluator

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestShippedPatternsKeepTheirBranchFilter guards the cliff of maxBranchLiterals: a long template pattern
// whose gate literals outgrow the filter loses it silently, and then every branch runs on every call (a
// hundredfold slowdown on 2 KB). Each long regex default in the shipped library must keep its filter.
func TestShippedPatternsKeepTheirBranchFilter(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "templates", "library", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no shipped templates found: %v", err)
	}
	checked := 0
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var tpl struct {
			Parameters []struct {
				Name    string `json:"name"`
				Type    string `json:"type"`
				Default any    `json:"default"`
			} `json:"parameters"`
		}
		if err := yaml.Unmarshal(raw, &tpl); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, p := range tpl.Parameters {
			pattern, ok := p.Default.(string)
			if p.Type != "regex" || !ok || len(splitTopLevel(pattern)) < 20 {
				continue
			}
			checked++
			if newBranchFilter(pattern, "(?i)") == nil {
				t.Errorf("%s: parameter %s: the pattern has no branch filter (more than %d gate literals, or a branch that does not compile alone)",
					filepath.Base(file), p.Name, maxBranchLiterals)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no long regex pattern was checked")
	}
}
