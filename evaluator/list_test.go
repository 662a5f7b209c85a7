package evaluator

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func TestListEvaluate(t *testing.T) {
	list := func(vals ...any) *Data { return &Data{Value: vals, Text: "(json)"} }
	tests := []struct {
		name, config string
		data         *Data
		want         bool
	}{
		// exact
		{"exact equal", `{"values":["admin","root"]}`, text("root"), true},
		{"exact folds case", `{"values":["Admin"]}`, text("ADMIN"), true},
		{"exact partial no", `{"values":["admin"]}`, text("admin user"), false},
		{"exact case sensitive no", `{"values":["Admin"],"case_sensitive":true}`, text("admin"), false},
		{"exact case sensitive yes", `{"values":["Admin"],"case_sensitive":true}`, text("Admin"), true},
		{"exact unicode fold", `{"values":["Straße"]}`, text("STRASSE"), false},
		{"exact unicode fold yes", `{"values":["ÉCOLE"]}`, text("école"), true},
		{"exact sigma", `{"values":["ΟΔΟΣ"]}`, text("οδος"), true},
		{"exact kelvin", `{"values":["5k"]}`, text("5\u212a"), true},
		{"exact long ascii", `{"values":["` + strings.Repeat("ab", 200) + `"]}`, text(strings.Repeat("AB", 200)), true},
		{"exact longer than any value", `{"values":["a"]}`, text("aa"), false},
		{"exact number text", `{"values":["42"]}`, &Data{Value: 42.0, Text: "42"}, true},
		// contains: whole words and phrases
		{"contains word", `{"values":["bomb"],"match_mode":"contains"}`, text("how to build a bomb?"), true},
		{"contains inside word no", `{"values":["bomb"],"match_mode":"contains"}`, text("bombastic speech"), false},
		{"contains suffix of word no", `{"values":["bomb"],"match_mode":"contains"}`, text("a Abomb"), false},
		{"contains phrase", `{"values":["credit card"],"match_mode":"contains"}`, text("my Credit Card number"), true},
		{"contains phrase split no", `{"values":["credit card"],"match_mode":"contains"}`, text("credit  card"), false},
		{"contains at edges", `{"values":["hi"],"match_mode":"contains"}`, text("hi"), true},
		{"contains underscore is word", `{"values":["key"],"match_mode":"contains"}`, text("api_key"), false},
		{"contains digit is word", `{"values":["key"],"match_mode":"contains"}`, text("key2"), false},
		{"contains punctuation boundary", `{"values":["key"],"match_mode":"contains"}`, text("(key)"), true},
		{"contains unicode letters are word", `{"values":["ban"],"match_mode":"contains"}`, text("bané"), false},
		{"contains second occurrence", `{"values":["ban"],"match_mode":"contains"}`, text("banana ban"), true},
		{"contains case sensitive no", `{"values":["Ban"],"match_mode":"contains","case_sensitive":true}`, text("a ban"), false},
		{"contains non-ascii value", `{"values":["café"],"match_mode":"contains"}`, text("au CAFÉ!"), true},
		{"contains value with punctuation", `{"values":["$100"],"match_mode":"contains"}`, text("pay $100 now"), true},
		// starts_with / ends_with
		{"starts_with", `{"values":["sudo "],"match_mode":"starts_with"}`, text("SUDO rm -rf"), true},
		{"starts_with no", `{"values":["sudo"],"match_mode":"starts_with"}`, text("run sudo"), false},
		{"starts_with case sensitive", `{"values":["sudo"],"match_mode":"starts_with","case_sensitive":true}`, text("SUDO"), false},
		{"ends_with", `{"values":[".exe"],"match_mode":"ends_with"}`, text("setup.EXE"), true},
		{"ends_with no", `{"values":[".exe"],"match_mode":"ends_with"}`, text("setup.exe.txt"), false},
		{"ends_with unicode", `{"values":["ÉTÉ"],"match_mode":"ends_with"}`, text("un été"), true},
		{"ends_with case sensitive", `{"values":["Z"],"match_mode":"ends_with","case_sensitive":true}`, text("abz"), false},
		{"ends_with longer value", `{"values":["abcd"],"match_mode":"ends_with"}`, text("bcd"), false},
		// logic
		{"all present", `{"values":["alpha","beta"],"logic":"all","match_mode":"contains"}`, text("beta then alpha"), true},
		{"all missing one", `{"values":["alpha","beta"],"logic":"all","match_mode":"contains"}`, text("alpha only"), false},
		{"all duplicates folded", `{"values":["alpha","ALPHA"],"logic":"all","match_mode":"contains"}`, text("alpha"), true},
		{"all across items", `{"values":["alpha","beta"],"logic":"all"}`, list("alpha", "x", "beta"), true},
		{"all exact single text", `{"values":["alpha","beta"],"logic":"all"}`, text("alpha"), false},
		// match_on no_match
		{"no_match inverts", `{"values":["allowed"],"match_on":"no_match"}`, text("other"), true},
		{"no_match present", `{"values":["allowed"],"match_on":"no_match"}`, text("allowed"), false},
		{"no_match all partially", `{"values":["a","b"],"logic":"all","match_on":"no_match","match_mode":"contains"}`, text("a"), true},
		{"no_match all present", `{"values":["a","b"],"logic":"all","match_on":"no_match","match_mode":"contains"}`, text("b a"), false},
		{"no_match null never", `{"values":["a"],"match_on":"no_match"}`, &Data{}, false},
		{"no_match empty never", `{"values":["a"],"match_on":"no_match"}`, text(""), false},
		{"no_match empty list never", `{"values":["a"],"match_on":"no_match"}`, list(), false},
		{"no_match list of nulls never", `{"values":["a"],"match_on":"no_match"}`, list(nil, ""), false},
		// null, empty and list inputs
		{"null", `{"values":["a"]}`, &Data{}, false},
		{"nil data", `{"values":["a"]}`, nil, false},
		{"empty string", `{"values":["a"]}`, text(""), false},
		{"list item", `{"values":["root"]}`, list("guest", "ROOT"), true},
		{"list no item", `{"values":["root"]}`, list("guest", "admin"), false},
		{"list non-string item as json", `{"values":["{\"a\":1,\"b\":\"<x>\"}"]}`, list(map[string]any{"b": "<x>", "a": 1.0}), true},
		{"list number item", `{"values":["7"]}`, list(7.0), true},
		{"list bool item", `{"values":["true"]}`, list(true), true},
		{"list contains item", `{"values":["bomb"],"match_mode":"contains"}`, list("safe", "a bomb here"), true},
		{"list nested list item", `{"values":["[\"a\",1]"]}`, list([]any{"a", 1.0}), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := buildEval(t, "list", tt.config)
			res, err := ev.Evaluate(context.Background(), tt.data)
			if err != nil {
				t.Fatal(err)
			}
			if res.Matched != tt.want {
				t.Fatalf("matched = %v, want %v", res.Matched, tt.want)
			}
			if res.Matched && res.Message == "" {
				t.Error("no message on a match")
			}
		})
	}
}

func TestNewListErrors(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		opts   ListOptions
		want   []problem
	}{
		{"no values", nil, ListOptions{}, []problem{{"values", "minItems"}}},
		{"too many", make([]string, MaxListValues+1), ListOptions{}, []problem{{"values", "maxItems"}}},
		{"blank", []string{"a", " "}, ListOptions{}, []problem{{"values.1", "pattern"}}},
		{"too long", []string{strings.Repeat("é", MaxListValueLength+1)}, ListOptions{}, []problem{{"values.0", "maxLength"}}},
		{"bad utf8", []string{"a\xff"}, ListOptions{}, []problem{{"values.0", "type"}}},
		{"bad mode", []string{"a"}, ListOptions{Mode: "regex"}, []problem{{"match_mode", "enum"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewList(tt.values, tt.opts)
			var got []problem
			var fe FieldError
			var ce *ConfigError
			switch {
			case errors.As(err, &ce):
				got = problemsOf(t, ce)
			case errors.As(err, &fe):
				got = []problem{{fe.Field, fe.Code}}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v (err %v)", got, tt.want, err)
			}
		})
	}
}

func TestListRequiredLiterals(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		opts   ListOptions
		want   []string
		folds  bool
	}{
		{"folded", []string{"Secret", "API key", "secret"}, ListOptions{}, []string{"api key", "secret"}, true},
		{"case sensitive", []string{"Secret"}, ListOptions{CaseSensitive: true}, []string{"Secret"}, false},
		{"contains all", []string{"a", "b"}, ListOptions{Mode: ListContains, All: true}, []string{"a", "b"}, true},
		{"no_match", []string{"a"}, ListOptions{NoMatch: true}, nil, false},
		{"non-ascii folded", []string{"café"}, ListOptions{}, nil, false},
		{"non-ascii case sensitive", []string{"café"}, ListOptions{CaseSensitive: true}, []string{"café"}, false},
		{"non-ascii without case", []string{"€5"}, ListOptions{}, []string{"€5"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := NewList(tt.values, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			lits, folds, ok := l.RequiredLiterals()
			if tt.want == nil {
				if ok {
					t.Fatalf("got %q, want no prefilter", lits)
				}
				return
			}
			got := append([]string(nil), lits...)
			sort.Strings(got)
			if !ok || !reflect.DeepEqual(got, tt.want) || folds != tt.folds {
				t.Fatalf("got %q folds=%v ok=%v, want %q folds=%v", got, folds, ok, tt.want, tt.folds)
			}
		})
	}
}

func TestListNoMatchDoesNotAllocate(t *testing.T) {
	configs := map[string]ListOptions{
		"exact":                {},
		"exact/case_sensitive": {CaseSensitive: true},
		"contains":             {Mode: ListContains},
		"contains/all":         {Mode: ListContains, All: true},
		"starts_with":          {Mode: ListStartsWith},
		"ends_with":            {Mode: ListEndsWith},
	}
	values := []string{"password", "credit card", "Élan", "wire transfer", "api key"}
	inputs := []string{benchInput, "Élégant café " + benchInput, strings.Repeat("x", 600)}
	for name, o := range configs {
		l, err := NewList(values, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range inputs {
			d := text(in)
			allocs := testing.AllocsPerRun(100, func() {
				if res, _ := l.Evaluate(context.Background(), d); res.Matched {
					t.Fatalf("%s matched %.20q", name, in)
				}
			})
			if allocs != 0 {
				t.Errorf("%s on %.20q: %v allocs", name, in, allocs)
			}
		}
	}
}
