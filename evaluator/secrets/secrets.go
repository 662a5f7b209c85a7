// Package secrets provides the "secrets" evaluator: it finds credentials (cloud keys, VCS and chat
// tokens, private keys, JWTs, AI and payment API keys, other services' API keys, generic secrets assigned
// to key/token/password fields) with gitleaks' default rule set and allow lists, generated from the pinned
// gitleaks module by ./gitleaksgen into rules.json (MIT, see LICENSE.gitleaks).
//
// Importing the package registers the evaluator in evaluator.Default:
//
//	import _ "github.com/guardrail-control/guard/evaluator/secrets"
//
// A rule runs only where one of its keywords occurs (ASCII case-insensitively), and only on a window
// around each occurrence, so that a text without keywords costs one pass over its bytes. Matches are
// reported by rule id, group and byte offsets into the selected text, never with the secret itself.
package secrets

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/guardrail-control/guard/evaluator"
)

// Name is the evaluator's registered name.
const Name = "secrets"

// Version is the evaluator's version as GET /evaluators shows it. 1.1.0: gitleaks' whole default rule set
// (the rule ids of 1.0.0 are unchanged), the "service" group, gitleaks' allow lists in full. 1.2.0: bare
// forms of format-distinctive rules, url-credentials, masked values as placeholders (extra.go).
const Version = "1.2.0"

// Limits of a config.
const (
	maxAllowValues   = 1000
	maxAllowPatterns = 100
	defaultFindings  = 20
	maxFindingsLimit = 100
	// maxWindow bounds one regex run (bytes); maxTotalFindings bounds the findings of one text (the
	// verdict is settled long before).
	maxWindow        = 4096
	maxTotalFindings = 1000
)

// configSchema is built from the vendored rules, so that the enums list exactly the groups and rules
// shipped.
func configSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"rule_groups": map[string]any{
				"type": "array", "minItems": 1, "uniqueItems": true,
				"items":       map[string]any{"type": "string", "enum": evaluator.AnyList(builtin.groups)},
				"description": "Rule groups to run (default: all).",
			},
			"rules": map[string]any{
				"type": "array", "minItems": 1, "uniqueItems": true,
				"items":       map[string]any{"type": "string", "enum": evaluator.AnyList(builtin.ruleIDs())},
				"description": "Run only these rules (by gitleaks rule id), within rule_groups.",
			},
			"exclude_rules": map[string]any{
				"type": "array", "uniqueItems": true,
				"items":       map[string]any{"type": "string", "enum": evaluator.AnyList(builtin.ruleIDs())},
				"description": "Rules not to run.",
			},
			"allow_values": map[string]any{
				"type": "array", "maxItems": maxAllowValues,
				"items":       map[string]any{"type": "string", "minLength": 1, "maxLength": 1024},
				"description": "Secrets that are not reported (documented test keys, for instance), compared exactly.",
			},
			"allow_patterns": map[string]any{
				"type": "array", "maxItems": maxAllowPatterns,
				"items":       map[string]any{"type": "string", "minLength": 1, "maxLength": 1024},
				"description": "RE2 regular expressions; a secret one of them matches is not reported.",
			},
			"max_findings": map[string]any{
				"type": "integer", "minimum": 1, "maximum": maxFindingsLimit, "default": defaultFindings,
				"description": "How many findings the result's metadata lists (all are counted).",
			},
		},
		"additionalProperties": false,
	}
}

func init() { evaluator.Register(Factory()) }

// Factory returns the secrets evaluator's factory, for registering into a registry other than
// evaluator.Default (the package's init already registers it there).
func Factory() evaluator.Factory {
	return evaluator.Factory{
		Name: Name,
		Description: "Finds credentials (cloud keys, VCS and chat tokens, private keys, JWTs, API keys, generic secrets) " +
			"with gitleaks' rules (" + builtin.version + "); reports rule ids and offsets, never the secret.",
		Version:      Version,
		ConfigSchema: mustJSON(configSchema()),
		New: func(config map[string]any, _ evaluator.Options) (evaluator.Evaluator, error) {
			return New(config)
		},
	}
}

// Evaluator is a configured secrets evaluator. It is safe for concurrent use.
type Evaluator struct {
	rules         []*rule
	allowValues   map[string]bool
	allowPatterns []*regexp.Regexp
	maxFindings   int
	literals      []string
	kw            *keywordIndex
}

// New builds an evaluator from a config (see the package documentation and the schema). Problems are
// reported as *evaluator.ConfigError.
func New(config map[string]any) (*Evaluator, error) {
	e := &Evaluator{maxFindings: defaultFindings}
	var problems []evaluator.FieldError
	bad := func(field, code, msg string) {
		problems = append(problems, evaluator.FieldError{Field: field, Code: code, Message: msg})
	}
	groups, only, exclude := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for k, v := range config {
		switch k {
		case "rule_groups", "rules", "exclude_rules", "allow_values", "allow_patterns":
			list, ok := evaluator.StringList(v)
			if !ok {
				bad(k, "type", "must be a list of strings")
				continue
			}
			for i, s := range list {
				field := fmt.Sprintf("%s.%d", k, i)
				switch k {
				case "rule_groups":
					if !slices.Contains(builtin.groups, s) {
						bad(field, "enum", "is not a rule group")
					}
					groups[s] = true
				case "rules", "exclude_rules":
					if !slices.Contains(builtin.ruleIDs(), s) {
						bad(field, "enum", "is not a rule id")
					}
					if k == "rules" {
						only[s] = true
					} else {
						exclude[s] = true
					}
				case "allow_values":
					if e.allowValues == nil {
						e.allowValues = map[string]bool{}
					}
					e.allowValues[s] = true
				case "allow_patterns":
					re, err := regexp.Compile(s)
					if err != nil {
						bad(field, "invalid_regex", "is not a valid RE2 regular expression")
						continue
					}
					e.allowPatterns = append(e.allowPatterns, re)
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
	seen := map[string]bool{}
	for _, r := range builtin.rules {
		if (len(groups) > 0 && !groups[r.group]) || (len(only) > 0 && !only[r.id]) || exclude[r.id] {
			continue
		}
		e.rules = append(e.rules, r)
		for _, kw := range r.keywords {
			if !seen[kw] {
				seen[kw] = true
				e.literals = append(e.literals, kw)
			}
		}
	}
	if len(e.rules) == 0 {
		return nil, &evaluator.ConfigError{Problems: []evaluator.FieldError{{Field: "rules", Code: "empty",
			Message: "selects no rule: rule_groups, rules and exclude_rules leave nothing to run"}}}
	}
	e.kw = newKeywordIndex(e.rules)
	return e, nil
}

// RequiredLiterals implements evaluator.Prefilter: a rule never matches unless one of its keywords
// occurs (compared ASCII case-insensitively, which is how the evaluator itself gates its rules).
func (e *Evaluator) RequiredLiterals() (literals []string, foldsCase bool, ok bool) {
	return e.literals, false, true
}

// Finding is one secret found: the rule, its group and the byte offsets of the secret in the text.
type Finding struct {
	Rule  string `json:"rule"`
	Group string `json:"group"`
	Start int    `json:"start"`
	End   int    `json:"end"`
}

// scratch is the per-evaluation working memory, pooled.
type scratch struct {
	hits []hit
	wins []window
}

var scratchPool = sync.Pool{New: func() any { return &scratch{hits: make([]hit, 0, 64), wins: make([]window, 0, 16)} }}

// Evaluate matches when a rule finds a secret in the selected text (for a non-string value, its compact
// JSON text). Null or empty data never matches.
func (e *Evaluator) Evaluate(ctx context.Context, d *evaluator.Data) (evaluator.Result, error) {
	if d == nil || d.IsNull() || d.Text == "" {
		return evaluator.Result{Confidence: 1}, nil
	}
	findings, err := e.Scan(ctx, evaluator.ScanText(d))
	if err != nil {
		return evaluator.Result{}, err
	}
	return e.result(findings), nil
}

// result is the Result of the findings of a text.
func (e *Evaluator) result(findings []Finding) evaluator.Result {
	if len(findings) == 0 {
		return evaluator.Result{Confidence: 1}
	}
	listed := make([]any, 0, min(len(findings), e.maxFindings))
	var ids []string
	for i, f := range findings {
		if i < e.maxFindings {
			listed = append(listed, map[string]any{"rule": f.Rule, "group": f.Group, "start": f.Start, "end": f.End})
		}
		if !slices.Contains(ids, f.Rule) {
			ids = append(ids, f.Rule)
		}
	}
	sort.Strings(ids)
	return evaluator.Result{
		Matched:    true,
		Confidence: 1,
		Message:    fmt.Sprintf("%d secret(s) found: %s", len(findings), strings.Join(ids, ", ")),
		Metadata:   map[string]any{"findings": listed, "finding_count": len(findings), "rules": evaluator.AnyList(ids)},
	}
}

// Scan returns the secrets in text, sorted by offset. It fails only when ctx is done.
func (e *Evaluator) Scan(ctx context.Context, text string) ([]Finding, error) {
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	sc.hits = e.kw.find(text, sc.hits[:0])
	if len(sc.hits) == 0 {
		return nil, nil
	}
	slices.SortFunc(sc.hits, func(a, b hit) int {
		if a.rule != b.rule {
			return int(a.rule - b.rule)
		}
		return int(a.pos - b.pos)
	})
	var out []Finding
	hits := sc.hits
	for len(hits) > 0 {
		n := 1
		for n < len(hits) && hits[n].rule == hits[0].rule {
			n++
		}
		r := e.rules[hits[0].rule]
		sc.wins = r.windows(text, hits[:n], sc.wins[:0])
		hits = hits[n:]
		if len(sc.wins) == 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for i, w := range sc.wins {
			if i > 0 && i%16 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			out = e.scanWindow(r, text, w, out)
			if len(out) >= maxTotalFindings {
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Start != out[j].Start {
			return out[i].Start < out[j].Start
		}
		return out[i].Rule < out[j].Rule
	})
	return out, nil
}

// window is a byte range of the text a rule's regex runs on.
type window struct{ start, end int }

// windows appends the merged windows around the keyword hits of r (sorted by position). A rule of the
// "name = value" shape gets a window only where an assignment follows the keyword.
func (r *rule) windows(text string, hits []hit, out []window) []window {
	n := len(text)
	for _, h := range hits {
		p, end := int(h.pos), int(h.pos)+int(h.kwLen)
		if r.gate != nil && !r.gated(text, p) {
			continue
		}
		w := window{wordStart(text, max(0, p-r.before)), min(n, end+r.after)}
		if r.start != nil {
			if !r.start.at(text, p) {
				continue
			}
			w.start = p
		}
		from := p
		if r.assign {
			op, ok := assignmentAfter(text, end)
			if !ok || (r.value != nil && !r.value.possible(text, op)) {
				continue
			}
			w.end = min(n, op+r.after)
			from = op
		} else if !r.spelled {
			from = min(n, end+maxBefore) // the match may start up to maxBefore bytes after the keyword
		}
		if r.run != nil {
			// An unbounded regex: the window ends where a match from here can no longer reach, which in
			// prose is a few hundred bytes on, not r.after.
			w.end = r.run.extent(text, from, w.end)
		}
		// Merge overlapping windows, but keep each under maxWindow bytes: the regexes are linear, yet a
		// text crowded with keywords must not turn into one long regex run that cannot be interrupted.
		if k := len(out); k > 0 && w.start <= out[k-1].end && max(out[k-1].end, w.end)-out[k-1].start <= maxWindow {
			out[k-1].end = max(out[k-1].end, w.end)
			continue
		}
		out = append(out, w)
	}
	return out
}

// scanWindow runs r on one window of text and appends the findings that pass the allow-lists.
func (e *Evaluator) scanWindow(r *rule, text string, w window, out []Finding) []Finding {
	sub := text[w.start:w.end]
	matches := r.re.FindAllStringSubmatchIndex(sub, -1)
	if len(matches) > 0 && w.end < len(text) && matches[len(matches)-1][1] == len(sub) {
		// The last match reaches the window's end, where $ matched or the token was cut: scan a longer
		// window once, and drop a last match that still reaches its end (it cannot be confirmed).
		end := min(len(text), w.end+maxWindow)
		sub = text[w.start:end]
		matches = r.re.FindAllStringSubmatchIndex(sub, -1)
		if n := len(matches); n > 0 && end < len(text) && matches[n-1][1] == len(sub) {
			matches = matches[:n-1]
		}
	}
	for _, m := range matches {
		s, t := secretSpan(m, r.secretGroup)
		secret := sub[s:t]
		if !e.reportable(r, secret, sub[m[0]:m[1]], text, w.start+m[0], w.start+m[1]) {
			continue
		}
		f := Finding{Rule: r.id, Group: r.group, Start: w.start + s, End: w.start + t}
		if len(out) < maxTotalFindings && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// secretSpan picks the secret of a match: the chosen group, or the first non-empty group, or the match.
func secretSpan(m []int, group int) (int, int) {
	if group > 0 && 2*group+1 < len(m) && m[2*group] >= 0 {
		return m[2*group], m[2*group+1]
	}
	if group == 0 {
		for g := 1; 2*g+1 < len(m); g++ {
			if m[2*g] >= 0 && m[2*g+1] > m[2*g] {
				return m[2*g], m[2*g+1]
			}
		}
	}
	return m[0], m[1]
}

// reportable applies the entropy threshold and the allow-lists of gitleaks and of the config to a match
// (text[start:end]) and its secret.
func (e *Evaluator) reportable(r *rule, secret, match, text string, start, end int) bool {
	// gitleaks drops a secret whose entropy is not above the threshold.
	if secret == "" || (r.entropy > 0 && shannon(secret) <= r.entropy) {
		return false
	}
	if e.allowValues[secret] || isPlaceholder(secret) {
		return false
	}
	if anyMatches(secret, builtin.allow, r.allow, e.allowPatterns) || anyMatches(match, builtin.allowMatch, r.allowMatch) {
		return false
	}
	if len(builtin.allowLine)+len(r.allowLine) > 0 && anyMatches(lineAround(text, start, end), builtin.allowLine, r.allowLine) {
		return false
	}
	if builtin.stopwords.in(secret) || r.stopwords.in(secret) {
		return false
	}
	return true
}

// anyMatches reports whether a regex of one of the lists matches s.
func anyMatches(s string, lists ...[]*regexp.Regexp) bool {
	for _, list := range lists {
		for _, re := range list {
			if re.MatchString(s) {
				return true
			}
		}
	}
	return false
}

// lineAround is the line of text holding text[start:end] (the match may span several lines).
func lineAround(text string, start, end int) string {
	if i := strings.LastIndexByte(text[:start], '\n'); i >= 0 {
		start = i + 1
	} else {
		start = 0
	}
	if i := strings.IndexByte(text[end:], '\n'); i >= 0 {
		end += i
	} else {
		end = len(text)
	}
	return text[start:end]
}

// wordStart moves a window start that falls inside a word back to the word's start (at most 64 bytes), so
// that a \b at the window's edge does not match where the whole text has none.
func wordStart(text string, i int) int {
	limit := max(0, i-64)
	for i > limit && isWordByte(text[i-1]) && isWordByte(text[i]) {
		i--
	}
	return i
}

func isWordByte(c byte) bool {
	return c == '_' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// shannon is the Shannon entropy of s in bits per byte, as gitleaks computes it.
func shannon(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	n := float64(len(s))
	h := 0.0
	for _, c := range counts {
		if c == 0 {
			continue
		}
		p := float64(c) / n
		h -= p * math.Log2(p)
	}
	return h
}
