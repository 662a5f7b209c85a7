package toxicity

import (
	"encoding/json"
	"sort"
	"strings"
)

// DefaultCategories are the moderation categories whose highest score is the toxicity score, unless a
// config lists its own "categories".
//
// Toxicity here means abusive language aimed at people: insults, harassment, hate and threats. So:
//
//   - harassment, harassment/threatening: abuse aimed at a person, including threats of harm.
//   - hate, hate/threatening: abuse aimed at a group for a protected attribute, including threats.
//
// Not counted, because they describe other risks that a toxicity threshold would block by mistake:
//
//   - violence, violence/graphic: depictions of violence (news, history, fiction); threats against a
//     target are already scored by the two */threatening categories.
//   - self-harm, self-harm/intent, self-harm/instructions: a risk to the writer, who needs help rather
//     than a refusal for being "toxic".
//   - sexual, sexual/minors, illicit, illicit/violent: content policies of their own.
//
// A control that wants any of these scores lists them in its config's "categories".
var DefaultCategories = []string{"harassment", "harassment/threatening", "hate", "hate/threatening"}

// maxScore returns the highest score among cats and its category (the first in cats order on a tie).
// found is false when scores holds none of cats.
func maxScore(scores map[string]float64, cats []string) (score float64, top string, found bool) {
	for _, c := range cats {
		s, ok := scores[c]
		if !ok {
			continue
		}
		if !found || s > score {
			score, top, found = s, c, true
		}
	}
	return score, top, found
}

// textOf returns the text sent for scoring: a string value as is; for lists and objects the string
// leaves joined by newlines (object keys in sorted order, so the same value always gives the same
// text), leaving out keys, numbers and booleans, which carry no toxicity and would only add noise;
// for any other Go value, the selector's text form.
func textOf(v any, fallback string) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case []any, map[string]any:
		var b strings.Builder
		if !collectText(v, &b, 0) {
			return fallback
		}
		return b.String()
	case bool, float64, json.Number:
		return ""
	}
	return fallback
}

// maxDepth bounds the recursion of collectText; deeper values fall back to the text form.
const maxDepth = 64

// collectText appends the string leaves of v to b. It reports false for values that are not plain
// decoded JSON or are nested too deep.
func collectText(v any, b *strings.Builder, depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch v := v.(type) {
	case string:
		if strings.TrimSpace(v) == "" {
			return true
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(v)
	case []any:
		for _, e := range v {
			if !collectText(e, b, depth+1) {
				return false
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !collectText(v[k], b, depth+1) {
				return false
			}
		}
	case nil, bool, float64, json.Number:
	default:
		return false
	}
	return true
}
