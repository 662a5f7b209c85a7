package evaluator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/bits"
	"strings"
	"unicode/utf8"
)

// Limits of a list config.
const (
	MaxListValues      = 1000
	MaxListValueLength = 1024 // characters
)

// ListMode is how a list value is compared with the text.
type ListMode string

// The list match modes.
const (
	ListExact      ListMode = "exact"       // the whole text equals the value
	ListContains   ListMode = "contains"    // the value occurs as a whole word or phrase
	ListStartsWith ListMode = "starts_with" // the text starts with the value
	ListEndsWith   ListMode = "ends_with"   // the text ends with the value
)

// ListOptions configure a List evaluator. The zero value is: case-insensitive, logic any, match_on
// match, match_mode exact.
type ListOptions struct {
	CaseSensitive bool
	// All requires every value to be present (logic: all) instead of any one (logic: any).
	All bool
	// NoMatch inverts the verdict (match_on: no_match). Null or empty input never matches, even then.
	NoMatch bool
	Mode    ListMode
}

const listSchema = `{
  "type": "object",
  "properties": {
    "values": {
      "type": "array", "minItems": 1, "maxItems": 1000,
      "items": {"type": "string", "minLength": 1, "maxLength": 1024, "pattern": "\\S"},
      "description": "The values to look for (non-blank strings)."
    },
    "case_sensitive": {"type": "boolean", "default": false, "description": "Compare letters case-sensitively."},
    "logic": {"type": "string", "enum": ["any", "all"], "default": "any", "description": "any: one value suffices; all: every value must be present."},
    "match_on": {"type": "string", "enum": ["match", "no_match"], "default": "match", "description": "no_match inverts the verdict; null or empty input never matches."},
    "match_mode": {"type": "string", "enum": ["exact", "contains", "starts_with", "ends_with"], "default": "exact", "description": "exact: the whole text; contains: a whole word or phrase; starts_with / ends_with: a prefix / suffix."}
  },
  "required": ["values"],
  "additionalProperties": false
}`

// ListFactory describes the built-in list evaluator.
func ListFactory() Factory {
	return Factory{
		Name:         "list",
		Description:  "Matches when the selected text equals, contains (as a whole word or phrase), starts or ends with listed values.",
		Version:      "1.0.0",
		ConfigSchema: []byte(listSchema),
		New:          newListFromConfig,
	}
}

func newListFromConfig(config map[string]any, _ Options) (Evaluator, error) {
	raw, _ := config["values"].([]any)
	values := make([]string, 0, len(raw))
	for _, v := range raw {
		s, _ := v.(string)
		values = append(values, s)
	}
	var o ListOptions
	o.CaseSensitive, _ = config["case_sensitive"].(bool)
	logic, _ := config["logic"].(string)
	o.All = logic == "all"
	on, _ := config["match_on"].(string)
	o.NoMatch = on == "no_match"
	mode, _ := config["match_mode"].(string)
	o.Mode = ListMode(mode)
	return NewList(values, o)
}

// List is the compiled list evaluator. It is safe for concurrent use.
type List struct {
	opts ListOptions
	// keys are the distinct values as compared: folded with foldRune unless case-sensitive.
	keys      []string
	hasFolded bool // some value is not ASCII-only
	exactSet  map[string]int32
	maxKeyLen int
	// byFirst and byLast bucket value indexes by the first / last rune of their key.
	byFirst, byLast runeBuckets
	literalsOK      bool
}

// runeBuckets maps a rune to value indexes. It is sized by the values, not by the alphabet: a list of a
// few values costs a few dozen bytes (a fixed table per ASCII character cost 3 KB per list, 6 KB for the
// two of a list). ASCII runes are found through a 128-bit set and the rank of the rune in it (one
// popcount), which indexes compact offsets into one shared slice of value indexes; other runes go
// through a map. Filled with add, then frozen with freeze before use.
type runeBuckets struct {
	mask  [2]uint64 // ASCII runes that have values
	start []int32   // per ASCII rune with values, in rune order: its first position in idx; one more at the end
	idx   []int32   // value indexes, grouped by rune, each group in insertion order
	other map[rune][]int32
	// pending holds the ASCII (rune, index) pairs until freeze.
	pending []runeIdx
}

type runeIdx struct {
	r   rune
	idx int32
}

func (b *runeBuckets) add(r rune, idx int32) {
	if r < utf8.RuneSelf {
		b.pending = append(b.pending, runeIdx{r, idx})
		return
	}
	if b.other == nil {
		b.other = make(map[rune][]int32)
	}
	b.other[r] = append(b.other[r], idx)
}

// freeze builds the compact ASCII table from the pairs added so far.
func (b *runeBuckets) freeze() {
	var count [utf8.RuneSelf]int32
	for _, p := range b.pending {
		count[p.r]++
		b.mask[p.r>>6] |= 1 << (uint(p.r) & 63)
	}
	runes := bits.OnesCount64(b.mask[0]) + bits.OnesCount64(b.mask[1])
	b.start = make([]int32, runes+1)
	b.idx = make([]int32, len(b.pending))
	var at [utf8.RuneSelf]int32 // next free position of each rune's group
	k, pos := 0, int32(0)
	for r := range count {
		if count[r] == 0 {
			continue
		}
		b.start[k] = pos
		at[r] = pos
		pos += count[r]
		k++
	}
	b.start[k] = pos
	for _, p := range b.pending {
		b.idx[at[p.r]] = p.idx
		at[p.r]++
	}
	b.pending = nil
}

func (b *runeBuckets) get(r rune) []int32 {
	if r < utf8.RuneSelf {
		w, bit := r>>6, uint64(1)<<(uint(r)&63)
		if b.mask[w]&bit == 0 {
			return nil
		}
		k := bits.OnesCount64(b.mask[w] & (bit - 1))
		if w == 1 {
			k += bits.OnesCount64(b.mask[0])
		}
		return b.idx[b.start[k]:b.start[k+1]]
	}
	return b.other[r]
}

// NewList compiles a list evaluator. Values must be non-blank; case folding is done here, once.
func NewList(values []string, o ListOptions) (*List, error) {
	if o.Mode == "" {
		o.Mode = ListExact
	}
	switch o.Mode {
	case ListExact, ListContains, ListStartsWith, ListEndsWith:
	default:
		return nil, FieldError{Field: "match_mode", Code: "enum", Message: "must be one of exact, contains, starts_with, ends_with"}
	}
	if len(values) == 0 {
		return nil, FieldError{Field: "values", Code: "minItems", Message: "must have at least 1 items"}
	}
	if len(values) > MaxListValues {
		return nil, FieldError{Field: "values", Code: "maxItems", Message: fmt.Sprintf("must have at most %d items", MaxListValues)}
	}
	l := &List{opts: o, exactSet: make(map[string]int32, len(values)), literalsOK: !o.NoMatch}
	var problems []FieldError
	for i, v := range values {
		field := fmt.Sprintf("values.%d", i)
		switch {
		case strings.TrimSpace(v) == "":
			problems = append(problems, FieldError{Field: field, Code: "pattern", Message: "must not be blank"})
			continue
		case utf8.RuneCountInString(v) > MaxListValueLength:
			problems = append(problems, FieldError{Field: field, Code: "maxLength", Message: fmt.Sprintf("must have at most %d characters", MaxListValueLength)})
			continue
		case !utf8.ValidString(v):
			problems = append(problems, FieldError{Field: field, Code: "type", Message: "must be valid UTF-8"})
			continue
		}
		key := v
		if !o.CaseSensitive {
			key = foldString(v)
			if hasCaseVariantNonASCII([]rune(v)) {
				l.literalsOK = false
			}
		}
		if _, dup := l.exactSet[key]; dup {
			continue
		}
		idx := int32(len(l.keys))
		l.keys = append(l.keys, key)
		l.exactSet[key] = idx
		if !isASCII(key) {
			l.hasFolded = true
		}
		l.maxKeyLen = max(l.maxKeyLen, len(key))
		first, _ := utf8.DecodeRuneInString(key)
		last, _ := utf8.DecodeLastRuneInString(key)
		l.byFirst.add(first, idx)
		l.byLast.add(last, idx)
	}
	if len(problems) > 0 {
		return nil, &ConfigError{Problems: problems}
	}
	l.byFirst.freeze()
	l.byLast.freeze()
	if o.Mode != ListExact {
		l.exactSet = nil // it only found duplicates: exactIndex alone reads it
	}
	return l, nil
}

// Evaluate checks d against the values. A list-valued input is checked item by item (strings as they
// are, other items as compact JSON, null items skipped); logic all needs every value somewhere in the
// input. Null or empty input never matches, even with match_on no_match. A string that does not match
// costs no allocation.
func (l *List) Evaluate(_ context.Context, d *Data) (Result, error) {
	if d == nil || d.IsNull() {
		return Result{Confidence: 1}, nil
	}
	var found foundSet
	seen := false
	present := false
	if items, ok := d.Value.([]any); ok {
		for _, item := range items {
			text, ok := itemText(item)
			if !ok || text == "" {
				continue
			}
			seen = true
			if l.scan(text, &found) {
				present = true
				break
			}
		}
	} else if d.Text != "" {
		seen = true
		present = l.scan(ScanText(d), &found) // JSON escapes decoded: "\n" is not a letter glued to a word
	}
	if !seen {
		return Result{Confidence: 1}, nil
	}
	if present == l.opts.NoMatch {
		return Result{Confidence: 1}, nil
	}
	msg := "a listed value is present"
	if l.opts.NoMatch {
		msg = "no listed value is present"
		if l.opts.All {
			msg = "not every listed value is present"
		}
	} else if l.opts.All {
		msg = "every listed value is present"
	}
	return Result{Matched: true, Confidence: 1, Message: msg}, nil
}

// itemText is the text of one item of a list input.
func itemText(item any) (string, bool) {
	switch v := item.(type) {
	case nil:
		return "", false
	case string:
		return v, true
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(item); err != nil {
		return "", false
	}
	text := strings.TrimSuffix(buf.String(), "\n")
	return ScanText(&Data{Value: item, Text: text}), true // escapes decoded in place, as for Evaluate's text
}

// foundSet records which values were found (logic all); MaxListValues bits on the stack.
type foundSet struct {
	bits [(MaxListValues + 63) / 64]uint64
	n    int
}

func (f *foundSet) add(idx int32) {
	w, b := idx/64, uint64(1)<<(idx%64)
	if f.bits[w]&b == 0 {
		f.bits[w] |= b
		f.n++
	}
}

// hit records value idx and reports whether the verdict is settled (any: one hit; all: every value).
func (l *List) hit(idx int32, found *foundSet) bool {
	if !l.opts.All {
		return true
	}
	found.add(idx)
	return found.n == len(l.keys)
}

// scan looks for the values in one text and reports whether the verdict is settled.
func (l *List) scan(text string, found *foundSet) bool {
	switch l.opts.Mode {
	case ListContains:
		return l.scanContains(text, found)
	case ListStartsWith:
		r, _ := utf8.DecodeRuneInString(text)
		for _, idx := range l.byFirst.get(l.key(r)) {
			if _, ok := l.matchAt(text, 0, l.keys[idx]); ok && l.hit(idx, found) {
				return true
			}
		}
		return false
	case ListEndsWith:
		r, _ := utf8.DecodeLastRuneInString(text)
		for _, idx := range l.byLast.get(l.key(r)) {
			if l.hasSuffix(text, l.keys[idx]) && l.hit(idx, found) {
				return true
			}
		}
		return false
	}
	idx, ok := l.exactIndex(text)
	return ok && l.hit(idx, found)
}

// key is how a text rune is compared with value keys.
func (l *List) key(r rune) rune {
	if l.opts.CaseSensitive {
		return r
	}
	return foldRune(r)
}

// exactFoldBuf bounds the stack buffer used to fold short ASCII texts for a set lookup.
const exactFoldBuf = 256

// exactIndex finds the value equal to text (folded unless case-sensitive) without allocating.
func (l *List) exactIndex(text string) (int32, bool) {
	if l.opts.CaseSensitive {
		idx, ok := l.exactSet[text]
		return idx, ok
	}
	if len(text) > utf8.UTFMax*l.maxKeyLen {
		return 0, false // a folded rune is never shorter than a quarter of the original
	}
	if isASCII(text) {
		if len(text) > l.maxKeyLen {
			return 0, false // folding keeps an ASCII text's length; keys are never longer
		}
		if len(text) <= exactFoldBuf {
			var buf [exactFoldBuf]byte
			for i := 0; i < len(text); i++ {
				c := text[i]
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				buf[i] = c
			}
			idx, ok := l.exactSet[string(buf[:len(text)])]
			return idx, ok
		}
	}
	r, _ := utf8.DecodeRuneInString(text)
	for _, idx := range l.byFirst.get(foldRune(r)) {
		if end, ok := l.matchAt(text, 0, l.keys[idx]); ok && end == len(text) {
			return idx, true
		}
	}
	return 0, false
}

// scanContains finds values that occur with a non-word character or an edge of the text on both sides.
// Candidate starts are the text's positions that follow a non-word character.
func (l *List) scanContains(text string, found *foundSet) bool {
	prevWord := false
	for i, r := range text {
		if !prevWord {
			for _, idx := range l.byFirst.get(l.key(r)) {
				end, ok := l.matchAt(text, i, l.keys[idx])
				if !ok {
					continue
				}
				if end < len(text) {
					if next, _ := utf8.DecodeRuneInString(text[end:]); isWordRune(next) {
						continue
					}
				}
				if l.hit(idx, found) {
					return true
				}
			}
		}
		prevWord = isWordRune(r)
	}
	return false
}

// matchAt reports whether key occurs in text at byte offset i (comparing folded runes unless
// case-sensitive) and where the occurrence ends.
func (l *List) matchAt(text string, i int, key string) (int, bool) {
	if l.opts.CaseSensitive {
		if strings.HasPrefix(text[i:], key) {
			return i + len(key), true
		}
		return 0, false
	}
	for j := 0; j < len(key); {
		if i >= len(text) {
			return 0, false
		}
		kc, tc := key[j], text[i]
		if kc < utf8.RuneSelf && tc < utf8.RuneSelf {
			if 'A' <= tc && tc <= 'Z' {
				tc += 'a' - 'A'
			}
			if kc != tc {
				return 0, false
			}
			i++
			j++
			continue
		}
		kr, ks := utf8.DecodeRuneInString(key[j:])
		tr, ts := utf8.DecodeRuneInString(text[i:])
		if foldRune(tr) != kr {
			return 0, false
		}
		i += ts
		j += ks
	}
	return i, true
}

// hasSuffix reports whether text ends with key (folded unless case-sensitive).
func (l *List) hasSuffix(text, key string) bool {
	if l.opts.CaseSensitive {
		return strings.HasSuffix(text, key)
	}
	i, j := len(text), len(key)
	for j > 0 {
		if i == 0 {
			return false
		}
		kr, ks := utf8.DecodeLastRuneInString(key[:j])
		tr, ts := utf8.DecodeLastRuneInString(text[:i])
		if foldRune(tr) != kr {
			return false
		}
		i -= ts
		j -= ks
	}
	return true
}

// RequiredLiterals implements Prefilter for match_on match: one of the values must occur in the text.
// It is not offered for match_on no_match, nor when case-insensitive values hold non-ASCII letters.
func (l *List) RequiredLiterals() (literals []string, foldsCase bool, ok bool) {
	if !l.literalsOK {
		return nil, false, false
	}
	return l.keys, !l.opts.CaseSensitive, true
}
