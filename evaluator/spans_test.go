package evaluator

import (
	"context"
	"reflect"
	"testing"
	"time"
)

func TestRegexSpans(t *testing.T) {
	tests := []struct {
		name, pattern, text string
		want                []Span
	}{
		{"every match", `\d+`, "a1 b22 c333", []Span{{1, 2, "regex"}, {4, 6, "regex"}, {8, 11, "regex"}}},
		{"empty matches are dropped", `x*`, "axxb", []Span{{1, 3, "regex"}}},
		{"no match", `z`, "abc", nil},
		{"byte offsets after non-ASCII (RE2)", `b+`, "ééb", []Span{{4, 5, "regex"}}},
		{"byte offsets after non-ASCII (backtracking)", `(?<=é)b+`, "éébb ab éb", []Span{{4, 6, "regex"}, {12, 13, "regex"}}},
		{"invalid UTF-8 bytes count one each (backtracking)", `(?=b)b`, "\xff\xfeb", []Span{{2, 3, "regex"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewRegex(tc.pattern, false, false, false, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.Spans(context.Background(), &Data{Value: tc.text, Text: tc.text})
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Spans = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestRegexSpansStopWithTheContext(t *testing.T) {
	r, err := NewRegex(`(?=a)a`, false, false, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Spans(ctx, &Data{Value: "a", Text: "a"}); err == nil {
		t.Fatal("Spans on a done context succeeded")
	}
}

func TestListSpans(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		opts   ListOptions
		text   string
		want   []Span
	}{
		{"exact, folded", []string{"Top Secret"}, ListOptions{}, "TOP SECRET", []Span{{0, 10, "list"}}},
		{"exact, other text", []string{"secret"}, ListOptions{}, "secret plan", nil},
		{"contains: whole words, longest first", []string{"red", "red fox"}, ListOptions{Mode: ListContains}, "a red fox, red foxes, redder", []Span{{2, 9, "list"}, {11, 14, "list"}}},
		{"contains: case-sensitive", []string{"Bob"}, ListOptions{Mode: ListContains, CaseSensitive: true}, "bob Bob", []Span{{4, 7, "list"}}},
		{"contains: non-ASCII folding", []string{"éclair"}, ListOptions{Mode: ListContains}, "un ÉCLAIR.", []Span{{3, 10, "list"}}},
		{"starts_with: the longest prefix", []string{"ab", "abc"}, ListOptions{Mode: ListStartsWith}, "abcd", []Span{{0, 3, "list"}}},
		{"ends_with: the longest suffix", []string{"z", "yz"}, ListOptions{Mode: ListEndsWith}, "xyz", []Span{{1, 3, "list"}}},
		{"ends_with: folded non-ASCII", []string{"straße"}, ListOptions{Mode: ListEndsWith}, "Hauptstraße", []Span{{5, 12, "list"}}},
		{"no_match reports nothing", []string{"x"}, ListOptions{NoMatch: true}, "y", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := NewList(tc.values, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := l.Spans(context.Background(), &Data{Value: tc.text, Text: tc.text})
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Spans = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// FuzzSpans: the spans of regex and list are in range, non-empty, sorted and non-overlapping, on any text
// (invalid UTF-8 included), for any list value and match mode.
func FuzzSpans(f *testing.F) {
	f.Add("a red fox, red foxes", "red", uint8(1), false)
	f.Add("éé\xffb ab", "b", uint8(3), true)
	f.Add("ÉCLAIR", "éclair", uint8(0), false)
	f.Fuzz(func(t *testing.T, text, value string, mode uint8, caseSensitive bool) {
		var spanners []Spanner
		for _, p := range []string{`\w+`, `(?<=a)b+`, `x*`} {
			r, err := NewRegex(p, !caseSensitive, false, false, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			spanners = append(spanners, r)
		}
		modes := []ListMode{ListExact, ListContains, ListStartsWith, ListEndsWith}
		if l, err := NewList([]string{value, "fox"}, ListOptions{Mode: modes[int(mode)%len(modes)], CaseSensitive: caseSensitive}); err == nil {
			spanners = append(spanners, l)
		}
		for _, s := range spanners {
			spans, err := s.Spans(context.Background(), &Data{Value: text, Text: text})
			if err != nil {
				t.Fatal(err)
			}
			checkEvaluateSpans(t, s, text)
			end := 0
			for _, sp := range spans {
				if sp.Start < end || sp.Start >= sp.End || sp.End > len(text) || sp.Type == "" {
					t.Fatalf("%T on %q: bad span %+v in %+v", s, text, sp, spans)
				}
				end = sp.End
			}
		}
	})
}

// checkEvaluateSpans fails unless s's EvaluateSpans answers on text what Evaluate and Spans answer.
func checkEvaluateSpans(t *testing.T, s Spanner, text string) {
	t.Helper()
	d := &Data{Value: text, Text: text}
	ctx := context.Background()
	wantRes, wantErr := s.(Evaluator).Evaluate(ctx, d)
	wantSpans, wantSpansErr := s.Spans(ctx, d)
	res, found, err := s.(SpanEvaluator).EvaluateSpans(ctx, d)
	if !reflect.DeepEqual(res, wantRes) || (err == nil) != (wantErr == nil) {
		t.Fatalf("%T on %q: EvaluateSpans gives %+v, %v; Evaluate %+v, %v", s, text, res, err, wantRes, wantErr)
	}
	if !reflect.DeepEqual(found.Spans, wantSpans) || (found.Err == nil) != (wantSpansErr == nil) {
		t.Fatalf("%T on %q: EvaluateSpans finds %+v; Spans %v, %v", s, text, found, wantSpans, wantSpansErr)
	}
}

// TestEvaluateSpans: one EvaluateSpans is Evaluate and Spans together, for the verdicts that spans alone
// do not give: empty matches (a match without a span), list logic all with some values missing (spans
// without a match), no_match (a match without spans), a null value.
func TestEvaluateSpans(t *testing.T) {
	var spanners []Spanner
	for _, p := range []string{`x*`, `^$`, `\d+`, `(?<=a)b+`, `(?=b)`} {
		r, err := NewRegex(p, false, false, false, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		spanners = append(spanners, r)
	}
	for _, opts := range []ListOptions{{Mode: ListContains, All: true}, {Mode: ListContains}, {NoMatch: true}, {Mode: ListStartsWith}} {
		l, err := NewList([]string{"red", "fox"}, opts)
		if err != nil {
			t.Fatal(err)
		}
		spanners = append(spanners, l)
	}
	for _, s := range spanners {
		for _, text := range []string{"", "a red hen", "red fox 12", "abb b", "xx"} {
			checkEvaluateSpans(t, s, text)
		}
		want, _ := s.(Evaluator).Evaluate(context.Background(), &Data{})
		if res, found, err := s.(SpanEvaluator).EvaluateSpans(context.Background(), &Data{}); err != nil || !reflect.DeepEqual(res, want) || found.Spans != nil {
			t.Errorf("%T on null: %+v %+v %v; Evaluate %+v", s, res, found, err, want)
		}
	}
}
