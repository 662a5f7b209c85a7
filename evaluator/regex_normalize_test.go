package evaluator

import (
	"context"
	"testing"
)

func TestRegexNormalize(t *testing.T) {
	tests := []struct {
		name, config, text string
		want               bool
		normalized         bool   // the match was found on the normalised text
		span               string // the span found, in the original ("" when no match)
	}{
		{"off: encoded payload passes", `{"pattern":"' or 1=1","flags":["I"]}`, "x%27%20or%201=1", false, false, ""},
		{"on: url encoded", `{"pattern":"' or 1=1","flags":["I"],"normalize":true}`, "x%27%20or%201=1", true, true, "%27%20or%201=1"},
		{"on: plain text still matches", `{"pattern":"' or 1=1","flags":["I"],"normalize":true}`, "x' or 1=1", true, false, "' or 1=1"},
		{"on: html entities", `{"pattern":"<script","normalize":true}`, "&lt;script&gt;", true, true, "&lt;script"},
		{"on: homoglyphs", `{"pattern":"ignore previous","normalize":true}`, "ign\u043ere previous", true, true, "ign\u043ere previous"},
		{"on: backtracking engine", `{"pattern":"(?<=;)id","normalize":true}`, "x%3Bid", true, true, "id"},
		{"on: no match anywhere", `{"pattern":"' or 1=1","normalize":true}`, "O%27Reilly", false, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := buildEval(t, "regex", tt.config)
			res, err := ev.Evaluate(context.Background(), text(tt.text))
			if err != nil {
				t.Fatal(err)
			}
			if res.Matched != tt.want {
				t.Fatalf("matched = %v, want %v", res.Matched, tt.want)
			}
			if got := res.Metadata["normalized"] == true; got != tt.normalized {
				t.Errorf("metadata %v, want normalized=%v", res.Metadata, tt.normalized)
			}
			res2, found, err := ev.(SpanEvaluator).EvaluateSpans(context.Background(), text(tt.text))
			if err != nil || res2.Matched != tt.want {
				t.Fatalf("EvaluateSpans = %v, %v", res2.Matched, err)
			}
			if tt.span == "" {
				if len(found.Spans) != 0 {
					t.Errorf("spans %v on no match", found.Spans)
				}
				return
			}
			if len(found.Spans) == 0 {
				t.Fatal("no span")
			}
			s := found.Spans[0]
			if got := tt.text[s.Start:s.End]; got != tt.span {
				t.Errorf("span %q, want %q", got, tt.span)
			}
		})
	}
}

// TestRegexNormalizeNoPrefilter: a literal may appear only once the text is decoded, so a normalising
// regex offers no prefilter that would skip it on the raw text.
func TestRegexNormalizeNoPrefilter(t *testing.T) {
	ev := buildEval(t, "regex", `{"pattern":"union select","normalize":true}`).(*Regex)
	if _, _, ok := ev.RequiredLiterals(); ok {
		t.Error("RequiredLiterals offered with normalize")
	}
	if _, _, ok := ev.RequiredRun(); ok {
		t.Error("RequiredRun offered with normalize")
	}
	plain := buildEval(t, "regex", `{"pattern":"union select"}`).(*Regex)
	if _, _, ok := plain.RequiredLiterals(); !ok {
		t.Error("RequiredLiterals lost without normalize")
	}
}
