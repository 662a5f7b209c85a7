package training

import (
	"fmt"
	"io"

	"sort"

	"github.com/guardrail-control/guard/evaluator/promptattack/internal/model"
)

// Measure is one row of a validation report: a source's items of one part at one operating point, how
// many fired the source's own head (attacks) or any head (ordinary text).
type Measure struct {
	Source string
	Label  Label
	Point  string
	Items  int
	Fired  int
}

// Rate is Fired/Items.
func (m Measure) Rate() float64 {
	if m.Items == 0 {
		return 0
	}
	return float64(m.Fired) / float64(m.Items)
}

// Measures scores the items of part with m at every operating point. An attack counts when its own head
// fires (direct injections: the direct head); ordinary text counts when the heads that would run on it
// fire: every head but the indirect one on prompts, every head on tool results.
func Measures(m *model.Model, items []Item, part Part) []Measure {
	type key struct {
		src, point string
	}
	rows := map[key]*Measure{}
	var order []key
	for _, it := range items {
		if it.Part != part {
			continue
		}
		best, _ := m.Score(it.Text, nil, nil)
		for _, p := range m.Points {
			k := key{it.Source, p.Name}
			r, ok := rows[k]
			if !ok {
				r = &Measure{Source: it.Source, Label: it.Label, Point: p.Name}
				rows[k] = r
				order = append(order, k)
			}
			r.Items++
			if fires(best, p, it.Label) {
				r.Fired++
			}
		}
	}
	out := make([]Measure, 0, len(order))
	for _, k := range order {
		out = append(out, *rows[k])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Label < out[j].Label })
	return out
}

func fires(best [model.K]model.Window, p model.Point, l Label) bool {
	switch l {
	case BenignPrompt:
		for c := range model.K - 1 {
			if best[c].Logit[c] >= p.Logit[c] {
				return true
			}
		}
		return false
	case BenignTool:
		for c := range model.K {
			if best[c].Logit[c] >= p.Logit[c] {
				return true
			}
		}
		return false
	default:
		return best[l].Logit[l] >= p.Logit[l]
	}
}

// WriteReport prints the rows as a table.
func WriteReport(w io.Writer, rows []Measure) {
	fmt.Fprintf(w, "%-44s %-20s %-9s %6s %6s %7s\n", "source", "label", "point", "items", "fired", "rate")
	for _, r := range rows {
		fmt.Fprintf(w, "%-44s %-20s %-9s %6d %6d %6.1f%%\n", r.Source, r.Label, r.Point, r.Items, r.Fired, 100*r.Rate())
	}
}

// WriteTop prints, per head, the n ordinary texts of part that score highest, and the n attacks of the
// head that score lowest: where the errors are.
func WriteTop(w io.Writer, m *model.Model, items []Item, part Part, n int) {
	type scored struct {
		l  float64
		it Item
		w  model.Window
	}
	for c := range model.K {
		var ben, att []scored
		for _, it := range items {
			if it.Part != part {
				continue
			}
			best, _ := m.Score(it.Text, nil, nil)
			s := scored{best[c].Logit[c], it, best[c]}
			switch {
			case it.Label == BenignPrompt || it.Label == BenignTool:
				ben = append(ben, s)
			case int(it.Label) == c:
				att = append(att, s)
			}
		}
		sort.Slice(ben, func(i, j int) bool { return ben[i].l > ben[j].l })
		sort.Slice(att, func(i, j int) bool { return att[i].l < att[j].l })
		fmt.Fprintf(w, "== head %s: highest ordinary\n", ClassNames[c])
		for _, s := range ben[:min(n, len(ben))] {
			fmt.Fprintf(w, "%7.3f %-30s %q\n", s.l, s.it.Source, clip(s.it.Text[s.w.Start:s.w.End], 200))
		}
		fmt.Fprintf(w, "== head %s: lowest attacks\n", ClassNames[c])
		for _, s := range att[:min(n, len(att))] {
			fmt.Fprintf(w, "%7.3f %-30s %q\n", s.l, s.it.Source, clip(s.it.Text, 200))
		}
	}
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
