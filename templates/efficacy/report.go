package efficacy

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"text/tabwriter"
)

// Summary is one template's figures over all its corpora: the recall on every attack item pooled, and the
// worst false-positive rate among its benign corpora.
type Summary struct {
	Template string  `json:"template"`
	Attacks  int     `json:"attacks"`
	Recall   float64 `json:"recall"`
	Benign   int     `json:"benign"`
	WorstFP  float64 `json:"worst_fp"`
	FPCorpus string  `json:"worst_fp_corpus,omitempty"`
	Errors   int     `json:"errors"`
}

// Summaries pools the rows by template, in the order of the rows.
func (r *Report) Summaries() []Summary {
	var out []Summary
	idx := map[string]int{}
	hits := map[string]int{}
	for _, row := range r.Rows {
		i, ok := idx[row.Template]
		if !ok {
			i = len(out)
			idx[row.Template] = i
			out = append(out, Summary{Template: row.Template})
		}
		s := &out[i]
		s.Errors += row.Errors
		switch row.Kind {
		case Attack:
			s.Attacks += row.Items
			hits[row.Template] += row.Hits
			s.Recall = rate(hits[row.Template], s.Attacks)
		case Benign:
			s.Benign += row.Items
			if row.Rate > s.WorstFP || s.FPCorpus == "" {
				s.WorstFP, s.FPCorpus = row.Rate, row.Corpus
			}
		}
	}
	return out
}

// WriteText prints the report: one line per template and corpus, then the summary per template.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TEMPLATE\tCORPUS\tKIND\tITEMS\tHITS\tRATE\tERRORS")
	for _, row := range r.Rows {
		what := "recall"
		if row.Kind == Benign {
			what = "fp"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s %s\t%d\n", row.Template, row.Corpus, row.Kind, row.Items, row.Hits, pct(row.Rate), what, row.Errors)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "TEMPLATE\tATTACKS\tRECALL\tBENIGN\tWORST FP\tERRORS")
	for _, s := range r.Summaries() {
		fp := "-"
		if s.Benign > 0 {
			fp = pct(s.WorstFP) + " (" + s.FPCorpus + ")"
		}
		rec := "-"
		if s.Attacks > 0 {
			rec = pct(s.Recall)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%d\n", s.Template, s.Attacks, rec, s.Benign, fp, s.Errors)
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(tw, "skipped: %s\n", s)
	}
	return tw.Flush()
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

// Floors are the recorded limits, by Row.Key: for an attack row the lowest recall accepted, for a benign
// row the highest false-positive rate accepted.
type Floors map[string]float64

// ParseFloors reads a floors file (a JSON object of Row.Key to a rate).
func ParseFloors(b []byte) (Floors, error) {
	var f Floors
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("efficacy: floors: %w", err)
	}
	return f, nil
}

// Check returns one line per row that is worse than its floor, has no floor, or had evaluator errors,
// and per floor whose row was not measured (a corpus or suite dropped by mistake).
func (f Floors) Check(r *Report) []string {
	var bad []string
	seen := map[string]bool{}
	for _, row := range r.Rows {
		k := row.Key()
		seen[k] = true
		limit, ok := f[k]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("%s: no floor recorded (measured %s); add it to testdata/floors.json", k, pct(row.Rate)))
		case row.Kind == Attack && row.Rate < limit:
			bad = append(bad, fmt.Sprintf("%s: recall %s is below its floor %s (%d of %d)", k, pct(row.Rate), pct(limit), row.Hits, row.Items))
		case row.Kind == Benign && row.Rate > limit:
			bad = append(bad, fmt.Sprintf("%s: false-positive rate %s is above its ceiling %s (%d of %d)", k, pct(row.Rate), pct(limit), row.Hits, row.Items))
		}
		if row.Errors > 0 {
			bad = append(bad, fmt.Sprintf("%s: %d evaluations ended in an evaluator error", k, row.Errors))
		}
	}
	var missing []string
	for k := range f {
		if !seen[k] {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	for _, k := range missing {
		bad = append(bad, fmt.Sprintf("%s: floor recorded but the row was not measured", k))
	}
	return bad
}

// FloorsOf returns the report's figures as floors: recalls rounded down and false-positive rates rounded up
// to a tenth of a percent, so that a rerun on the same code passes.
func FloorsOf(r *Report) Floors {
	f := Floors{}
	for _, row := range r.Rows {
		switch row.Kind {
		case Attack:
			f[row.Key()] = math.Floor(row.Rate*1000) / 1000
		case Benign:
			f[row.Key()] = math.Ceil(row.Rate*1000) / 1000
		}
	}
	return f
}
