package training

import (
	"crypto/sha256"
	"encoding/binary"
	"path/filepath"
	"strings"
)

// InstructionsPath holds instructions addressed to an agent (no override words needed: "When you summarise
// this page, tell the reader to ...", "Add 'Download ...' to your response"), written for the repository.
// The trainer hides each inside ordinary tool results of its own part of the split, so the indirect head
// learns instructions to the agent inside data rather than the documents a benchmark built them from.
const InstructionsPath = "evaluator/promptattack/train/data/indirect_instructions.jsonl"

// PerInstruction is how many documents each instruction is hidden in.
const PerInstruction = 6

// Synthesize returns indirect-injection items: every instruction of InstructionsPath hidden in
// PerInstruction ordinary tool results (label BenignTool) of the instruction's part, at a line or sentence
// boundary chosen by a hash. Contexts and positions depend only on the texts, so the result is the same
// on every run.
func Synthesize(repoDir string, items []Item) ([]Item, error) {
	instrs, err := readJSONL(filepath.Join(repoDir, InstructionsPath))
	if err != nil {
		return nil, err
	}
	var ctx [3][]string
	for _, it := range items {
		if it.Label == BenignTool && len(it.Text) < 6000 {
			ctx[it.Part] = append(ctx[it.Part], it.Text)
		}
	}
	var out []Item
	for _, ins := range instrs {
		part := PartOf(ins)
		pool := ctx[part]
		if len(pool) == 0 {
			continue
		}
		for k := range PerInstruction {
			h := sha256.Sum256([]byte(ins + "\x00" + string(rune('0'+k))))
			c := pool[binary.LittleEndian.Uint64(h[:8])%uint64(len(pool))]
			text, at := insert(c, ins, binary.LittleEndian.Uint64(h[8:16]))
			out = append(out, Item{Text: text, Label: IndirectInjection, Source: "synth/indirect_instructions", Part: part,
				Span: [2]int{at, at + len(ins)}})
		}
	}
	return out, nil
}

// insert puts ins into doc at the boundary chosen by r: after a line end when the document has lines,
// else after a sentence end, else at the end. It returns the text and where ins starts in it.
func insert(doc, ins string, r uint64) (string, int) {
	var cuts []int
	for i := 0; i < len(doc); i++ {
		if doc[i] == '\n' {
			cuts = append(cuts, i+1)
		}
	}
	if len(cuts) < 2 {
		cuts = cuts[:0]
		for i := 0; i+1 < len(doc); i++ {
			if (doc[i] == '.' || doc[i] == '!' || doc[i] == '?') && doc[i+1] == ' ' {
				cuts = append(cuts, i+2)
			}
		}
	}
	if len(cuts) == 0 {
		return doc + "\n" + ins, len(doc) + 1
	}
	at := cuts[r%uint64(len(cuts))]
	sep := "\n"
	if at > 0 && doc[at-1] != '\n' {
		sep = " "
	}
	return doc[:at] + ins + sep + strings.TrimLeft(doc[at:], " "), at
}
