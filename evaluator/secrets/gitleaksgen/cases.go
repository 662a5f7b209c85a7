package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zricethezav/gitleaks/v8/config"
	// The package whose rule functions hold the examples: imported so that go.mod and go.sum keep what
	// building it needs (buildCases builds gitleaks' config generator from a copy of the module).
	_ "github.com/zricethezav/gitleaks/v8/cmd/generate/config/rules"
)

// sample is one rule's examples as the overlaid validate.go records them.
type sample struct {
	Rule string   `json:"rule"`
	TPs  []string `json:"tps"`
	FPs  []string `json:"fps"`
}

// caseLine is one line of the generated corpora.
type caseLine struct {
	Text   string `json:"text"`
	Rule   string `json:"rule"`
	Family string `json:"family"`
}

// cases are the two generated corpora: the rules' true positives and their false positives.
type cases struct{ truePositives, falsePositives []byte }

// replacedFiles maps files of gitleaks' source to the replacements in ./replace.
var replacedFiles = map[string]string{
	"cmd/generate/config/utils/validate.go": "replace/validate.go.txt",
	"cmd/generate/secrets/regen.go":         "replace/regen.go.txt",
}

// recordSamples copies the pinned gitleaks module out of the module cache (go build refuses overlays of
// files there), replaces the two files, builds gitleaks' config generator in the copy and runs it:
// it writes gitleaks.toml from the rule functions (compared with the shipped one) while the replaced
// validate.go records each rule's examples.
func recordSamples() ([]sample, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", gitleaksModule).Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m %s: %w", gitleaksModule, err)
	}
	modDir := strings.TrimSpace(string(out))
	tmp, err := os.MkdirTemp("", "gitleaksgen")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "gitleaks")
	if err := os.CopyFS(src, os.DirFS(modDir)); err != nil {
		return nil, fmt.Errorf("copying %s: %w", modDir, err)
	}
	for orig, repl := range replacedFiles {
		b, err := os.ReadFile(repl)
		if err != nil {
			return nil, err
		}
		dst := filepath.Join(src, orig)
		if err := os.Chmod(dst, 0o644); err != nil {
			return nil, err
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return nil, err
		}
	}
	bin := filepath.Join(tmp, "generate-config")
	build := exec.Command("go", "build", "-mod=mod", "-o", bin, "./cmd/generate/config")
	build.Dir = src
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false", "GOWORK=off")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("building gitleaks' config generator with guard's validate.go: %w", err)
	}
	toml := filepath.Join(tmp, "gitleaks.toml")
	samplesPath := filepath.Join(tmp, "samples.jsonl")
	run := exec.Command(bin, toml)
	run.Dir = filepath.Join(src, "cmd/generate/config") // it reads rules/config.tmpl from there
	run.Env = append(os.Environ(), "GUARD_GITLEAKS_SAMPLES="+samplesPath)
	run.Stderr = os.Stderr
	if err := run.Run(); err != nil {
		return nil, fmt.Errorf("running gitleaks' config generator: %w", err)
	}
	generated, err := os.ReadFile(toml)
	if err != nil {
		return nil, err
	}
	if string(generated) != config.DefaultConfig {
		return nil, fmt.Errorf("the rule functions of %s do not produce its gitleaks.toml: the examples would not be the shipped rules'", gitleaksModule)
	}
	f, err := os.Open(samplesPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var samples []sample
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var s sample
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			return nil, err
		}
		samples = append(samples, s)
	}
	return samples, sc.Err()
}

// buildCases writes the examples of the rules in the generated rule file, sorted by rule and text (gitleaks
// builds some from a map, whose order varies).
func buildCases(rules []byte) (cases, error) {
	var rf ruleFile
	if err := json.Unmarshal(rules, &rf); err != nil {
		return cases{}, err
	}
	kept := map[string]bool{}
	for _, r := range rf.Rules {
		kept[r.ID] = true
	}
	samples, err := recordSamples()
	if err != nil {
		return cases{}, err
	}
	var tps, fps []caseLine
	for _, s := range samples {
		if !kept[s.Rule] {
			continue
		}
		for _, t := range s.TPs {
			tps = append(tps, caseLine{Text: t, Rule: s.Rule, Family: groupOf(s.Rule)})
		}
		for _, t := range s.FPs {
			fps = append(fps, caseLine{Text: t, Rule: s.Rule, Family: groupOf(s.Rule)})
		}
	}
	var c cases
	if c.truePositives, err = jsonLines(tps); err != nil {
		return c, err
	}
	c.falsePositives, err = jsonLines(fps)
	return c, err
}

func jsonLines(lines []caseLine) ([]byte, error) {
	slices.SortFunc(lines, func(a, b caseLine) int {
		if c := strings.Compare(a.Rule, b.Rule); c != 0 {
			return c
		}
		return strings.Compare(a.Text, b.Text)
	})
	lines = slices.Compact(lines)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}
