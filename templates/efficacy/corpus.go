package efficacy

import (
	"bufio"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// own holds the repository's own cases (testdata/*.jsonl), embedded so that `guard efficacy` measures them
// from any directory; the shared corpora are read from disk (they are not part of the repository).
//
//go:embed testdata/*.jsonl
var own embed.FS

// Item is one corpus line: a text and, for documents with labelled personal data, its spans; for a secret
// scanner's per-rule examples, the rule and its family (the secrets evaluator's rule group).
type Item struct {
	Text   string `json:"text"`
	Spans  []Span `json:"spans,omitempty"`
	Rule   string `json:"rule,omitempty"`
	Family string `json:"family,omitempty"`
}

// Span is a labelled piece of a document; Start and End count characters (runes), as the corpus does.
type Span struct {
	Type  string `json:"type"`
	Value string `json:"value"`
	Start int    `json:"start"`
	End   int    `json:"end"`
}

// DefaultDir is where the shared corpora are found relative to the repository root (CI checks the
// repository out next to them).
const DefaultDir = "../shared/efficacy"

// FindDir returns dir when given, else $GUARD_EFFICACY_DIR, else the first DefaultDir found from the
// working directory or one of its parents; "" when there is none.
func FindDir(dir string) string {
	if dir != "" {
		return dir
	}
	if d := os.Getenv("GUARD_EFFICACY_DIR"); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		cand := filepath.Join(wd, DefaultDir)
		if st, err := os.Stat(filepath.Join(cand, "manifest.json")); err == nil && !st.IsDir() {
			return cand
		}
		parent := filepath.Dir(wd)
		if parent == wd {
			return ""
		}
		wd = parent
	}
}

// Load reads the corpus name: "own/x" from the embedded testdata, any other name from dir/name.jsonl.
func Load(dir, name string) ([]Item, error) {
	var r io.Reader
	if rest, ok := strings.CutPrefix(name, "own/"); ok {
		f, err := own.Open("testdata/" + rest + ".jsonl")
		if err != nil {
			return nil, fmt.Errorf("efficacy: own corpus %s: %w", rest, err)
		}
		defer f.Close()
		r = f
	} else {
		if dir == "" {
			return nil, fmt.Errorf("efficacy: corpus %s: no shared corpus directory (set GUARD_EFFICACY_DIR or -dir)", name)
		}
		f, err := os.Open(filepath.Join(dir, name+".jsonl"))
		if err != nil {
			return nil, fmt.Errorf("efficacy: %w", err)
		}
		defer f.Close()
		r = f
	}
	return parse(name, r)
}

func parse(name string, r io.Reader) ([]Item, error) {
	var items []Item
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(strings.TrimSpace(string(b))) == 0 {
			continue
		}
		var it Item
		if err := json.Unmarshal(b, &it); err != nil {
			return nil, fmt.Errorf("efficacy: %s line %d: %w", name, line, err)
		}
		items = append(items, it)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("efficacy: %s: %w", name, err)
	}
	return items, nil
}

// ownNames lists the embedded corpora (for tests that check each is used).
func ownNames() ([]string, error) {
	ents, err := fs.ReadDir(own, "testdata")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".jsonl"); ok {
			out = append(out, "own/"+n)
		}
	}
	return out, nil
}
