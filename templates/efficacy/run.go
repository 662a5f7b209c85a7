// Package efficacy measures how much the shipped control templates catch: each template is rendered as
// `guard template render` renders it, and every corpus item is evaluated through the engine as
// POST /controls/try evaluates a draft (guard.New with the evaluator registry, Update, Evaluate), so the
// figures are those a user gets. Attack corpora give a recall (the share of items the control matches),
// benign corpora a false-positive rate (the share it matches). `guard efficacy` prints the report; the
// package's test fails when a figure falls below the floor recorded in testdata/floors.json.
package efficacy

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"unicode/utf8"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/evaluator"
	"github.com/guardrail-control/guard/templates"
)

// Kind says what a row measures.
type Kind string

// The kinds of rows.
const (
	Attack Kind = "attack" // Rate is a recall: higher is better
	Benign Kind = "benign" // Rate is a false-positive rate: lower is better
)

// Row is one template measured on one corpus.
type Row struct {
	Template string  `json:"template"` // template name; pii-in-outputs:TYPE for one entity type
	Corpus   string  `json:"corpus"`
	Kind     Kind    `json:"kind"`
	Items    int     `json:"items"`  // items (for pii attack rows: labelled spans)
	Hits     int     `json:"hits"`   // matched items (caught attacks, or false positives)
	Errors   int     `json:"errors"` // evaluations that ended in an evaluator error
	Rate     float64 `json:"rate"`   // Hits / Items
}

// Key is the row's name in the floors file: template/corpus/kind.
func (r Row) Key() string { return r.Template + "|" + r.Corpus + "|" + string(r.Kind) }

// Report is the outcome of Run.
type Report struct {
	Dir     string   `json:"dir"`
	Rows    []Row    `json:"rows"`
	Skipped []string `json:"skipped,omitempty"` // corpora or templates that could not be measured, with why
}

// Options narrow a run.
type Options struct {
	Dir       string                                 // the shared corpora; "" measures the own corpora only
	Templates []string                               // only these templates (all when empty)
	Registry  *evaluator.Registry                    // evaluator.Default when nil
	Miss      func(template, corpus string, it Item) // called for each missed attack, when set
	FalsePos  func(template, corpus string, it Item) // called for each benign item matched, when set
}

// Run measures every suite (and the pii suite) on its corpora.
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Registry == nil {
		o.Registry = evaluator.Default
	}
	rep := &Report{Dir: o.Dir}
	want := func(name string) bool {
		if len(o.Templates) == 0 {
			return true
		}
		for _, t := range o.Templates {
			if t == name || strings.HasPrefix(name, t+":") {
				return true
			}
		}
		return false
	}
	cache := map[string][]Item{}
	load := func(name string) ([]Item, bool) {
		if it, ok := cache[name]; ok {
			return it, it != nil
		}
		if !strings.HasPrefix(name, "own/") && o.Dir == "" {
			cache[name] = nil
			return nil, false
		}
		items, err := Load(o.Dir, name)
		if err != nil && optionalCorpora[name] && errors.Is(err, fs.ErrNotExist) {
			cache[name] = nil
			return nil, false
		}
		if err != nil {
			rep.Skipped = append(rep.Skipped, err.Error())
			cache[name] = nil
			return nil, false
		}
		cache[name] = items
		return items, true
	}
	for _, s := range Suites {
		if !want(s.name()) {
			continue
		}
		eng, err := engineFor(ctx, o.Registry, s.Template, s.Params, s.PartOnly)
		if err != nil {
			rep.Skipped = append(rep.Skipped, err.Error())
			continue
		}
		for _, group := range []struct {
			kind    Kind
			corpora []string
		}{{Attack, s.Attacks}, {Benign, s.Benign}} {
			for _, c := range group.corpora {
				items, ok := load(c)
				if !ok {
					continue
				}
				row := Row{Template: s.name(), Corpus: c, Kind: group.kind, Items: len(items)}
				families := map[string]*Row{} // items labelled with a rule family also count in their family's row
				for _, it := range items {
					res, err := eng.Evaluate(ctx, s.Step(it.Text), s.Stage)
					if err != nil {
						return nil, fmt.Errorf("efficacy: %s on %s: %w", s.name(), c, err)
					}
					if len(res.Errors) > 0 {
						row.Errors++
					}
					hit := len(res.Matches) > 0
					if group.kind == Benign && it.Rule != "" {
						// A rule's own false positive counts when that rule fires: some are another rule's
						// true positives (gitleaks lists a Cloudflare origin CA key as not a global API key).
						hit = firedRule(res, it.Rule)
					}
					if hit {
						row.Hits++
					}
					if it.Family != "" {
						fam := families[it.Family]
						if fam == nil {
							fam = &Row{Template: s.name() + ":" + it.Family, Corpus: c, Kind: group.kind}
							families[it.Family] = fam
						}
						fam.Items++
						if hit {
							fam.Hits++
						}
						if len(res.Errors) > 0 {
							fam.Errors++
						}
					}
					switch {
					case group.kind == Attack && !hit && o.Miss != nil:
						o.Miss(s.name(), c, it)
					case group.kind == Benign && hit && o.FalsePos != nil:
						o.FalsePos(s.name(), c, it)
					}
				}
				row.Rate = rate(row.Hits, row.Items)
				rep.Rows = append(rep.Rows, row)
				names := make([]string, 0, len(families))
				for f := range families {
					names = append(names, f)
				}
				sort.Strings(names)
				for _, f := range names {
					fam := families[f]
					fam.Rate = rate(fam.Hits, fam.Items)
					rep.Rows = append(rep.Rows, *fam)
				}
			}
		}
	}
	if want(PIISuite.Template) {
		if err := runPII(ctx, o, rep, load); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// firedRule reports whether a match of res was made by the secret rule id (the secrets evaluator lists its
// rules in the result's metadata).
func firedRule(res *guard.Result, id string) bool {
	for _, m := range res.Matches {
		rules, _ := m.Result.Metadata["rules"].([]any)
		for _, r := range rules {
			if r == id {
				return true
			}
		}
	}
	return false
}

func rate(hits, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(hits) / float64(n)
}

// engineFor renders the shipped template (defaults plus params) and loads it as the only control of a new
// engine, as POST /controls/try does with a draft. partOnly accepts a render whose own tests fail (a
// template measured in part, its other branches switched off).
func engineFor(ctx context.Context, reg *evaluator.Registry, name string, params map[string]any, partOnly bool) (*guard.Engine, error) {
	t, ok := templates.Shipped().Get(name)
	if !ok {
		return nil, fmt.Errorf("efficacy: no shipped template %q", name)
	}
	if params == nil {
		params = map[string]any{}
	}
	r, err := t.Render(ctx, params, templates.WithRegistry(reg))
	if err != nil {
		return nil, fmt.Errorf("efficacy: render %s: %w", name, err)
	}
	if len(r.OmittedTests) > 0 && !partOnly {
		return nil, fmt.Errorf("efficacy: render %s: its own tests fail: %v", name, r.OmittedTests)
	}
	d := r.Data
	d.Enabled = true
	eng := guard.New(guard.WithRegistry(reg), guard.WithExecution(guard.ExecutionServer, guard.ExecutionSDK))
	if err := eng.Update([]guard.Control{{ID: 1, Name: name, Data: d}}); err != nil {
		return nil, fmt.Errorf("efficacy: load %s: %w", name, err)
	}
	return eng, nil
}

// runPII measures each entity type of the pii evaluator on documents with labelled spans.
func runPII(ctx context.Context, o Options, rep *Report, load func(string) ([]Item, bool)) error {
	name := PIISuite.Template
	all := make([]any, 0, len(piiTypes))
	for _, t := range piiTypes {
		all = append(all, t)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].(string) < all[j].(string) })
	eng, err := engineFor(ctx, o.Registry, name, map[string]any{"entities": all}, false)
	if err != nil {
		rep.Skipped = append(rep.Skipped, err.Error())
		return nil
	}
	for _, c := range PIISuite.Corpora {
		items, ok := load(c)
		if !ok {
			continue
		}
		spans := map[string]*Row{}
		fps := map[string]*Row{}
		for _, t := range all {
			t := t.(string)
			spans[t] = &Row{Template: name + ":" + t, Corpus: c, Kind: Attack}
			fps[t] = &Row{Template: name + ":" + t, Corpus: c, Kind: Benign, Items: len(items)}
		}
		for _, it := range items {
			res, err := eng.Evaluate(ctx, &guard.Step{Type: "llm", Name: "chat", Output: it.Text}, guard.StagePost)
			if err != nil {
				return fmt.Errorf("efficacy: %s on %s: %w", name, c, err)
			}
			found := findings(res)
			labelled := map[string][][2]int{}
			for _, sp := range it.Spans {
				t, ok := piiTypes[sp.Type]
				if !ok {
					continue
				}
				b := [2]int{byteOffset(it.Text, sp.Start), byteOffset(it.Text, sp.End)}
				labelled[t] = append(labelled[t], b)
				row := spans[t]
				row.Items++
				if overlapsAny(b, found[t]) {
					row.Hits++
				} else if o.Miss != nil {
					o.Miss(name+":"+t, c, Item{Text: sp.Value + "\t<- " + it.Text})
				}
			}
			for t, fs := range found {
				for _, f := range fs {
					if !overlapsAny(f, labelled[t]) {
						fps[t].Hits++
						if o.FalsePos != nil {
							o.FalsePos(name+":"+t, c, Item{Text: it.Text[f[0]:f[1]] + "\t<- " + it.Text})
						}
						break
					}
				}
			}
			if len(res.Errors) > 0 {
				for _, r := range spans {
					r.Errors++
				}
			}
		}
		for _, t := range all {
			for _, r := range []*Row{spans[t.(string)], fps[t.(string)]} {
				r.Rate = rate(r.Hits, r.Items)
				rep.Rows = append(rep.Rows, *r)
			}
		}
	}
	return nil
}

// findings reads the pii evaluator's findings (byte offsets) from the result's metadata, by type.
func findings(res *guard.Result) map[string][][2]int {
	out := map[string][][2]int{}
	for _, m := range res.Matches {
		list, _ := m.Result.Metadata["findings"].([]any)
		for _, f := range list {
			fm, _ := f.(map[string]any)
			t, _ := fm["type"].(string)
			s, ok1 := asInt(fm["start"])
			e, ok2 := asInt(fm["end"])
			if t != "" && ok1 && ok2 {
				out[t] = append(out[t], [2]int{s, e})
			}
		}
	}
	return out
}

func asInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		return int(n), true
	}
	return 0, false
}

func overlapsAny(a [2]int, bs [][2]int) bool {
	for _, b := range bs {
		if a[0] < b[1] && b[0] < a[1] {
			return true
		}
	}
	return false
}

// byteOffset converts a rune offset of s to a byte offset (clamped to len(s)).
func byteOffset(s string, runes int) int {
	i := 0
	for n := 0; n < runes && i < len(s); n++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}
