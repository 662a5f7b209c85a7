// Package pii provides the "pii" evaluator: it finds personal data in text — e-mail addresses, phone
// numbers (E.164 and the national formats of a documented list of countries), payment card numbers
// (Luhn-checked), IBANs (mod-97-checked), US social security numbers (invalid ranges excluded) and IP
// addresses — scores each finding, raises the score when a context word is near (as Presidio does) and
// matches when a finding reaches min_confidence. Findings are reported by type, score and byte offsets,
// never with the value.
//
// Importing the package registers the evaluator in evaluator.Default:
//
//	import _ "github.com/guardrail-control/guard/evaluator/pii"
package pii

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/guardrail-control/guard/evaluator"
)

// Name is the evaluator's registered name.
const Name = "pii"

// Version is the evaluator's version as GET /evaluators shows it.
const Version = "1.0.0"

// The entity types.
const (
	Email      = "email"
	Phone      = "phone"
	CreditCard = "credit_card"
	IBAN       = "iban"
	USSSN      = "us_ssn"
	IPAddress  = "ip_address"
)

// Entities lists every entity type, in the order findings of equal score are preferred.
var Entities = []string{CreditCard, IBAN, Email, USSSN, IPAddress, Phone}

// Limits and defaults of a config.
const (
	DefaultMinConfidence = 0.5
	defaultFindings      = 20
	maxFindingsLimit     = 100
	maxAllowValues       = 1000
	maxContextWords      = 100
	contextBoost         = 0.35
)

func configSchema() json.RawMessage {
	ctxProps := map[string]any{}
	for _, e := range Entities {
		ctxProps[e] = map[string]any{"type": "array", "maxItems": maxContextWords,
			"items": map[string]any{"type": "string", "minLength": 1, "maxLength": 64}}
	}
	doc := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"entities": map[string]any{
				"type": "array", "minItems": 1, "uniqueItems": true,
				"items":       map[string]any{"type": "string", "enum": evaluator.AnyList(Entities)},
				"description": "Entity types to look for (default: all).",
			},
			"countries": map[string]any{
				"type": "array", "minItems": 1, "uniqueItems": true,
				"items":       map[string]any{"type": "string", "enum": evaluator.AnyList(Countries())},
				"description": "Countries whose national phone formats are recognised (default: all supported). E.164 numbers (+...) are recognised for every country.",
			},
			"min_confidence": map[string]any{
				"type": "number", "minimum": 0, "maximum": 1, "default": DefaultMinConfidence,
				"description": "A finding counts when its score (base score, raised by a nearby context word) reaches this.",
			},
			"context_words": map[string]any{
				"type": "object", "properties": ctxProps, "additionalProperties": false,
				"description": "More context words per entity type, added to the built-in ones.",
			},
			"allow_values": map[string]any{
				"type": "array", "maxItems": maxAllowValues,
				"items":       map[string]any{"type": "string", "minLength": 1, "maxLength": 256},
				"description": "Values that are not reported (a support address, for instance), compared exactly.",
			},
			"max_findings": map[string]any{
				"type": "integer", "minimum": 1, "maximum": maxFindingsLimit, "default": defaultFindings,
				"description": "How many findings the result's metadata lists (all are counted).",
			},
		},
		"additionalProperties": false,
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return b
}

func init() { evaluator.Register(Factory()) }

// Factory returns the pii evaluator's factory, for registering into a registry other than
// evaluator.Default (the package's init already registers it there).
func Factory() evaluator.Factory {
	return evaluator.Factory{
		Name: Name,
		Description: "Finds personal data: e-mail, phone numbers, payment cards (Luhn), IBAN (checksum), US SSN, IP addresses; " +
			"context words raise confidence; reports types and offsets, never values.",
		Version:      Version,
		ConfigSchema: configSchema(),
		New: func(config map[string]any, _ evaluator.Options) (evaluator.Evaluator, error) {
			return New(config)
		},
	}
}

// Evaluator is a configured pii evaluator. It is safe for concurrent use.
type Evaluator struct {
	entities       map[string]bool
	countries      map[string]bool
	phoneCountries []string // the selected countries, sorted
	entityMask     uint8    // bit entityRank(t) set for each selected entity type t
	countryMask    uint16   // countryBit of each selected country
	minConfidence  float64
	context        map[string][]string // lower case
	allowValues    map[string]bool
	maxFindings    int
}

// New builds an evaluator from a config; problems are reported as *evaluator.ConfigError.
func New(config map[string]any) (*Evaluator, error) {
	e := &Evaluator{minConfidence: DefaultMinConfidence, maxFindings: defaultFindings, context: map[string][]string{}}
	for k, v := range defaultContext {
		e.context[k] = slices.Clone(v)
	}
	var problems []evaluator.FieldError
	bad := func(field, code, msg string) {
		problems = append(problems, evaluator.FieldError{Field: field, Code: code, Message: msg})
	}
	for k, v := range config {
		switch k {
		case "entities", "countries", "allow_values":
			list, ok := evaluator.StringList(v)
			if !ok {
				bad(k, "type", "must be a list of strings")
				continue
			}
			set := map[string]bool{}
			for i, s := range list {
				switch {
				case k == "entities" && !slices.Contains(Entities, s):
					bad(fmt.Sprintf("%s.%d", k, i), "enum", "is not an entity type")
				case k == "countries" && !slices.Contains(Countries(), s):
					bad(fmt.Sprintf("%s.%d", k, i), "enum", "is not a supported country")
				}
				set[s] = true
			}
			switch k {
			case "entities":
				e.entities = set
			case "countries":
				e.countries = set
			default:
				e.allowValues = set
			}
		case "min_confidence":
			f, ok := evaluator.Number(v)
			if !ok || f < 0 || f > 1 {
				bad(k, "range", "must be a number between 0 and 1")
				continue
			}
			e.minConfidence = f
		case "context_words":
			m, ok := v.(map[string]any)
			if !ok {
				bad(k, "type", "must be an object of entity type to words")
				continue
			}
			for ent, words := range m {
				list, ok := evaluator.StringList(words)
				if !ok || !slices.Contains(Entities, ent) {
					bad(k+"."+ent, "invalid", "must be an entity type with a list of words")
					continue
				}
				for _, w := range list {
					if w = strings.ToLower(strings.TrimSpace(w)); w != "" {
						e.context[ent] = append(e.context[ent], w)
					}
				}
			}
		case "max_findings":
			f, ok := evaluator.Number(v)
			if !ok || f < 1 || f > maxFindingsLimit || f != math.Trunc(f) {
				bad(k, "range", fmt.Sprintf("must be a whole number between 1 and %d", maxFindingsLimit))
				continue
			}
			e.maxFindings = int(f)
		default:
			bad(k, "unknown_field", "is not a known field")
		}
	}
	if len(problems) > 0 {
		return nil, &evaluator.ConfigError{Problems: problems}
	}
	if e.entities == nil {
		e.entities = map[string]bool{}
		for _, x := range Entities {
			e.entities[x] = true
		}
	}
	if e.countries == nil {
		e.countries = map[string]bool{}
		for _, c := range Countries() {
			e.countries[c] = true
		}
	}
	for _, c := range Countries() {
		if e.countries[c] {
			e.phoneCountries = append(e.phoneCountries, c)
			e.countryMask |= countryBit(c)
		}
	}
	for t := range e.entities {
		e.entityMask |= 1 << entityRank(t)
	}
	return e, nil
}

// wants reports whether the entity type t is selected (a bit test: the scanners ask for every candidate).
func (e *Evaluator) wants(t string) bool { return e.entityMask&(1<<entityRank(t)) != 0 }

// RequiredLiterals implements evaluator.Prefilter: an e-mail address holds "@" and every other entity
// holds a digit, so a text with none of them cannot match.
func (e *Evaluator) RequiredLiterals() (literals []string, foldsCase bool, ok bool) {
	if e.entities[Email] {
		literals = append(literals, "@")
	}
	if len(e.entities) > 1 || !e.entities[Email] {
		literals = append(literals, "0", "1", "2", "3", "4", "5", "6", "7", "8", "9")
	}
	return literals, false, true
}

// Finding is one piece of personal data: its type, score and byte offsets in the text.
type Finding struct {
	Type  string  `json:"type"`
	Start int     `json:"start"`
	End   int     `json:"end"`
	Score float64 `json:"score"`
}

// Evaluate matches when a finding reaches min_confidence in the selected text (for a non-string value,
// its compact JSON text). Null or empty data never matches. The confidence is the best finding's score.
func (e *Evaluator) Evaluate(ctx context.Context, d *evaluator.Data) (evaluator.Result, error) {
	if d == nil || d.IsNull() || d.Text == "" {
		return evaluator.Result{Confidence: 1}, nil
	}
	if err := ctx.Err(); err != nil {
		return evaluator.Result{}, err
	}
	return e.result(e.Scan(evaluator.ScanText(d))), nil
}

// result is the Result of the findings fs of a text.
func (e *Evaluator) result(fs []Finding) evaluator.Result {
	if len(fs) == 0 {
		return evaluator.Result{Confidence: 1}
	}
	best := 0.0
	var counts [6]int // by entityRank
	listed := make([]any, 0, min(len(fs), e.maxFindings))
	for i, f := range fs {
		best = max(best, f.Score)
		counts[entityRank(f.Type)]++
		if i < e.maxFindings {
			listed = append(listed, map[string]any{"type": boxedEntities[entityRank(f.Type)], "start": f.Start, "end": f.End, "score": boxScore(f.Score)})
		}
	}
	var msg strings.Builder
	msg.WriteString("personal data found: ")
	countsAny := map[string]any{}
	var types []any
	for _, r := range entitiesByName {
		if counts[r] == 0 {
			continue
		}
		if len(types) > 0 {
			msg.WriteString(", ")
		}
		t := Entities[r]
		msg.WriteString(t)
		msg.WriteString(" (")
		msg.WriteString(strconv.Itoa(counts[r]))
		msg.WriteString(")")
		countsAny[t] = counts[r]
		types = append(types, boxedEntities[r])
	}
	return evaluator.Result{
		Matched:    true,
		Confidence: best,
		Message:    msg.String(),
		Metadata:   map[string]any{"findings": listed, "finding_count": len(fs), "counts": countsAny, "entities": types},
	}
}

// boxedEntities are the entity types as interface values, by entityRank: the metadata of every finding
// holds its type, and boxing a shared value costs no allocation.
var boxedEntities = func() (b [6]any) {
	for i, t := range Entities {
		b[i] = t
	}
	return b
}()

// entitiesByName are the entityRank values in the alphabetical order of the types (the order of the
// message and of metadata.entities).
var entitiesByName = func() []int {
	r := []int{0, 1, 2, 3, 4, 5}
	slices.SortFunc(r, func(a, b int) int { return cmp.Compare(Entities[a], Entities[b]) })
	return r
}()

// boxedScores are the scores 0, 0.01, ..., 1 as interface values. Every score is a base score or one
// raised by contextBoost and rounded to a hundredth, so boxScore almost always finds it here.
var boxedScores = func() (b [101]any) {
	for k := range b {
		b[k] = float64(k) / 100
	}
	return b
}()

// boxScore returns s as an interface value, shared when s is a hundredth (float64(k)/100 is the
// float64 nearest to k/100, as the literal 0.35 is, so the comparison is exact).
func boxScore(s float64) any {
	if k := math.Round(s * 100); k >= 0 && k <= 100 && float64(k)/100 == s {
		return boxedScores[int(k)]
	}
	return s
}

// Scan returns the findings in text that reach min_confidence, sorted by offset, without overlaps
// (where two candidates overlap, the higher score wins, then the earlier entity in Entities).
func (e *Evaluator) Scan(text string) []Finding {
	var buf [32]Finding // candidates; a text with more of them moves to the heap
	cands := buf[:0]
	if e.wants(Email) {
		cands = scanEmails(text, cands)
	}
	if e.wants(IBAN) {
		cands = scanIBANs(text, cands)
	}
	if e.wants(IPAddress) {
		cands = scanIPs(text, cands)
	}
	if e.wants(CreditCard) || e.wants(USSSN) || e.wants(Phone) {
		cands = e.scanNumbers(text, cands)
	}
	if len(cands) == 0 {
		return nil
	}
	kept := cands[:0]
	for _, c := range cands {
		if len(e.allowValues) > 0 && e.allowValues[text[c.Start:c.End]] {
			continue
		}
		if c.Score < 1 && e.hasContext(text, c) {
			c.Score = math.Min(1, math.Round((c.Score+contextBoost)*100)/100)
		}
		if c.Score >= e.minConfidence {
			kept = append(kept, c)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return slices.Clone(resolveOverlaps(kept))
}

// resolveOverlaps keeps, of overlapping findings, the best one; the result is sorted by offset and
// reuses fs's array.
func resolveOverlaps(fs []Finding) []Finding {
	if len(fs) < 2 {
		return fs
	}
	// Each scanner reports in text order, so sorting by offset is nearly free; when no finding overlaps
	// its successor (the common case) nothing overlaps and that order is the answer.
	slices.SortStableFunc(fs, func(a, b Finding) int { return cmp.Compare(a.Start, b.Start) })
	overlapping := false
	for i := 1; i < len(fs) && !overlapping; i++ {
		overlapping = fs[i].Start < fs[i-1].End
	}
	if !overlapping {
		return fs
	}
	slices.SortStableFunc(fs, func(a, b Finding) int {
		switch {
		case a.Score != b.Score:
			return cmp.Compare(b.Score, a.Score)
		case a.Type != b.Type:
			return cmp.Compare(entityRank(a.Type), entityRank(b.Type))
		}
		return cmp.Compare(a.Start, b.Start)
	})
	kept := fs[:0]
	for _, f := range fs {
		overlaps := false
		for _, k := range kept {
			if f.Start < k.End && k.Start < f.End {
				overlaps = true
				break
			}
		}
		if !overlaps {
			kept = append(kept, f)
		}
	}
	slices.SortFunc(kept, func(a, b Finding) int { return cmp.Compare(a.Start, b.Start) })
	return kept
}

// entityRank is the position of an entity type in Entities (the tie-break of equal scores).
func entityRank(t string) int {
	switch t {
	case CreditCard:
		return 0
	case IBAN:
		return 1
	case Email:
		return 2
	case USSSN:
		return 3
	case IPAddress:
		return 4
	}
	return 5
}
