package secrets

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// referenceScan is gitleaks' way of running rule r: its regex on the whole text when one of its keywords
// occurs anywhere (ASCII case-insensitively), then the same secret selection and allow lists.
func referenceScan(e *Evaluator, r *rule, text string) []Finding {
	lt := strings.ToLower(text)
	if !slices.ContainsFunc(r.keywords, func(k string) bool { return strings.Contains(lt, k) }) {
		return nil
	}
	var out []Finding
	for _, m := range r.re.FindAllStringSubmatchIndex(text, -1) {
		s, t := secretSpan(m, r.secretGroup)
		if e.reportable(r, text[s:t], text[m[0]:m[1]], text, m[0], m[1]) {
			out = append(out, Finding{Rule: r.id, Group: r.group, Start: s, End: t})
		}
	}
	return out
}

// checkAgainstReference compares the windowed scan of each rule with referenceScan on text: a secret the
// reference reports and the scan does not is a miss the windows caused.
func checkAgainstReference(t *testing.T, evals map[string]*Evaluator, text string) {
	t.Helper()
	for _, r := range builtin.rules {
		e := evals[r.id]
		if e == nil {
			e = build(t, map[string]any{"rules": []any{r.id}})
			evals[r.id] = e
		}
		got, err := e.Scan(context.Background(), text)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range referenceScan(e, r, text) {
			if !slices.Contains(got, want) {
				t.Errorf("%s: the whole-text run finds %q at %d, the windows do not, in %q", r.id, text[want.Start:want.End], want.Start, text)
			}
		}
	}
}

// TestScanMatchesReference: on gitleaks' examples, alone and embedded in 2 KB of prose, the windows find
// every secret that running each regex on the whole text finds.
func TestScanMatchesReference(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every rule on every example")
	}
	const dir = "../../templates/efficacy/testdata/"
	evals := map[string]*Evaluator{}
	seen := map[string]int{}
	for _, path := range []string{dir + "attack_secrets_gitleaks.jsonl", dir + "benign_secrets_gitleaks.jsonl"} {
		for _, l := range readExamples(t, path) {
			if seen[l.Rule] >= 4 { // four examples of each rule: each rule's shapes, at a bearable cost
				continue
			}
			seen[l.Rule]++
			checkAgainstReference(t, evals, l.Text)
			checkAgainstReference(t, evals, prose2KB[:700]+"\n"+l.Text+"\n"+prose2KB[700:1400])
		}
	}
}

// FuzzScanMatchesReference mutates examples and compares the windows with the whole-text run.
func FuzzScanMatchesReference(f *testing.F) {
	for _, s := range []string{fakeGitHubPAT, fakeAWSKey, fakeSlackBot, fakeJWT, fakePEM, fakeGeneric,
		"the key is eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"} {
		f.Add(s)
	}
	evals := map[string]*Evaluator{}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 4096 {
			return
		}
		checkAgainstReference(t, evals, text)
	})
}
