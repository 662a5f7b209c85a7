// Package training fits the prompt-attack classifier (package promptattack) from named corpora, calibrates
// its operating points on ordinary text held out from training, and reports recall and false positives on
// another held-out part. Everything is deterministic: the corpora are read in a fixed order, split by a
// hash of each text, shuffled with a fixed seed, and the arithmetic avoids fused multiply-adds, so the same
// data gives the same weights file byte for byte.
package training

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/guardrail-control/guard/evaluator/promptattack/internal/model"
)

// Label is what a corpus holds.
type Label int

// The labels of the corpora. The first four are the heads of the model, in order.
const (
	DirectInjection Label = iota
	Jailbreak
	Extraction
	IndirectInjection
	BenignPrompt // ordinary user prompts and role prompts
	BenignTool   // ordinary tool results and documents (READMEs, how-tos, e-mails, tables, code)
)

// ClassNames are the heads' names as the evaluator's config spells them.
var ClassNames = [4]string{"direct_injection", "jailbreak", "prompt_extraction", "indirect_injection"}

func (l Label) String() string {
	switch l {
	case BenignPrompt:
		return "benign_prompt"
	case BenignTool:
		return "benign_tool_result"
	default:
		return ClassNames[l]
	}
}

// Source is one corpus the trainer reads: a JSON-lines file of {"text"} objects.
type Source struct {
	Name  string // shown in reports
	Path  string // relative to the shared efficacy directory (Shared) or to the repository root
	Label Label
	// Shared marks a file of ../shared/efficacy (read there at training time, never copied).
	Shared bool
}

// Sources are the corpora the model is trained from, in the order they are read. Items are split by a
// hash of their text into training (60%), calibration (20%) and validation (20%) parts.
var Sources = []Source{
	{"train/jailbreak", "train/jailbreak.jsonl", Jailbreak, true},
	{"train/prompt_extraction", "train/prompt_extraction.jsonl", Extraction, true},
	{"train/indirect_injection", "train/indirect_injection.jsonl", IndirectInjection, true},
	{"train/benign_prompt", "train/benign_prompt.jsonl", BenignPrompt, true},
	{"train/benign_tool_result", "train/benign_tool_result.jsonl", BenignTool, true},
	{"attack_jailbreak", "attack_jailbreak.jsonl", Jailbreak, true},
	{"attack_prompt_injection", "attack_prompt_injection.jsonl", DirectInjection, true},
	{"benign_prompts", "benign_prompts.jsonl", BenignPrompt, true},

	{"own/attack_jailbreak", "templates/efficacy/testdata/attack_jailbreak.jsonl", Jailbreak, false},
	{"own/attack_prompt_injection", "templates/efficacy/testdata/attack_prompt_injection.jsonl", DirectInjection, false},
	{"own/attack_prompt_extraction", "templates/efficacy/testdata/attack_prompt_extraction.jsonl", Extraction, false},
	{"own/benign_text", "templates/efficacy/testdata/benign_text.jsonl", BenignPrompt, false},

	{"data/direct_injection", "evaluator/promptattack/train/data/direct_injection.jsonl", DirectInjection, false},
	{"data/prompt_extraction", "evaluator/promptattack/train/data/prompt_extraction.jsonl", Extraction, false},
	{"data/jailbreak", "evaluator/promptattack/train/data/jailbreak.jsonl", Jailbreak, false},
	{"data/indirect_injection", "evaluator/promptattack/train/data/indirect_injection.jsonl", IndirectInjection, false},
	{"data/benign_prompts", "evaluator/promptattack/train/data/benign_prompts.jsonl", BenignPrompt, false},
	{"data/benign_documents", "evaluator/promptattack/train/data/benign_documents.jsonl", BenignTool, false},
	{"data/benign_roles_awesome_chatgpt_prompts", "evaluator/promptattack/train/data/benign_roles_awesome_chatgpt_prompts.jsonl", BenignPrompt, false},
	{"data/benign_docs_rustbook", "evaluator/promptattack/train/data/benign_docs_rustbook.jsonl", BenignTool, false},
}

// Part is where a hash split puts an item.
type Part int

// The parts of the split.
const (
	Train Part = iota
	Calibrate
	Validate
)

// PartOf splits by the first byte of sha256("guard-promptattack-v1:" + text): 60% training, 20%
// calibration, 20% validation.
func PartOf(text string) Part {
	h := sha256.Sum256([]byte("guard-promptattack-v1:" + text))
	switch {
	case h[0] < 51:
		return Validate
	case h[0] < 102:
		return Calibrate
	default:
		return Train
	}
}

// Item is one text with its label, source and part.
type Item struct {
	Text   string
	Label  Label
	Source string
	Part   Part
	// Span is where the attack is in Text when that is known (an instruction hidden in a document); the zero
	// span means unknown or the whole text.
	Span [2]int
}

// Load reads every source: shared ones from sharedDir, the others from repoDir. Duplicate texts (after the
// first) are dropped so that one text never lands in two parts.
func Load(sharedDir, repoDir string) ([]Item, error) {
	var out []Item
	seen := map[string]bool{}
	for _, s := range Sources {
		base := repoDir
		if s.Shared {
			base = sharedDir
		}
		texts, err := readJSONL(filepath.Join(base, s.Path))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		for _, t := range texts {
			if t == "" || seen[t] {
				continue
			}
			seen[t] = true
			out = append(out, Item{Text: t, Label: s.Label, Source: s.Name, Part: PartOf(t)})
		}
	}
	return out, nil
}

func readJSONL(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 16<<20)
	for line := 1; sc.Scan(); line++ {
		var v struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, v.Text)
	}
	return out, sc.Err()
}

// Build loads the sources, adds the synthesized indirect injections, fits the model and fills its Info.
// It returns the model and the items (all parts), for a report.
func Build(sharedDir, repoDir string, o Options) (*model.Model, []Item, error) {
	items, err := Load(sharedDir, repoDir)
	if err != nil {
		return nil, nil, err
	}
	syn, err := Synthesize(repoDir, items)
	if err != nil {
		return nil, nil, err
	}
	items = append(items, syn...)
	Localize(items)
	m := Fit(items, o)
	m.Info = Describe(items)
	return m, items, nil
}

// FindShared returns $GUARD_EFFICACY_DIR when set, else the first ../shared/efficacy (the directory that
// holds train/) found from dir or one of its parents, or "" (as templates/efficacy finds it).
func FindShared(dir string) string {
	if d := os.Getenv("GUARD_EFFICACY_DIR"); d != "" {
		return d
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for {
		cand := filepath.Join(dir, "..", "shared", "efficacy")
		if st, err := os.Stat(filepath.Join(cand, "train", "manifest.json")); err == nil && !st.IsDir() {
			return filepath.Clean(cand)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Localize finds where the injected instruction is in indirect-injection items built from a document that
// also appears without it among the ordinary tool results (the training set builds them that way): the
// part between their common prefix and common suffix. Items with a known span keep it.
func Localize(items []Item) {
	const key = 150
	byPrefix := map[string][]string{}
	for _, it := range items {
		if it.Label == BenignTool && len(it.Text) >= key {
			byPrefix[it.Text[:key]] = append(byPrefix[it.Text[:key]], it.Text)
		}
	}
	for i := range items {
		it := &items[i]
		if it.Label != IndirectInjection || it.Span != [2]int{} || len(it.Text) < key {
			continue
		}
		for _, b := range byPrefix[it.Text[:key]] {
			p := 0
			for p < len(b) && p < len(it.Text) && b[p] == it.Text[p] {
				p++
			}
			s := 0
			for s < len(b)-p && s < len(it.Text)-p && b[len(b)-1-s] == it.Text[len(it.Text)-1-s] {
				s++
			}
			if end := len(it.Text) - s; end > p && end-p < 2000 {
				it.Span = [2]int{p, end}
				// Split by the instruction, not the document: the same instruction hidden in two documents
				// lands in one part, so validation measures instructions never trained on.
				it.Part = PartOf(strings.TrimSpace(it.Text[p:end]))
				break
			}
		}
	}
}
