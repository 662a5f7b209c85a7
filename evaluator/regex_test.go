package evaluator

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func buildEval(t *testing.T, name, config string) Evaluator {
	t.Helper()
	b, err := Default.Build(name, decodeConfig(t, config))
	if err != nil {
		t.Fatalf("Build(%s, %s): %v", name, config, err)
	}
	return b.Evaluator
}

func text(s string) *Data { return &Data{Value: s, Text: s} }

func TestRegexEvaluate(t *testing.T) {
	tests := []struct {
		name, config string
		data         *Data
		want         bool
		engine       string
	}{
		{"found anywhere", `{"pattern":"\\d{3}-\\d{2}-\\d{4}"}`, text("ssn 123-45-6789 here"), true, EngineRE2},
		{"not found", `{"pattern":"\\d{3}-\\d{2}-\\d{4}"}`, text("order 12-3"), false, EngineRE2},
		{"case sensitive by default", `{"pattern":"secret"}`, text("SECRET"), false, EngineRE2},
		{"IGNORECASE", `{"pattern":"secret","flags":["IGNORECASE"]}`, text("SECRET"), true, EngineRE2},
		{"I", `{"pattern":"secret","flags":["I"]}`, text("SeCrEt"), true, EngineRE2},
		{"no multiline", `{"pattern":"^b$"}`, text("a\nb\nc"), false, EngineRE2},
		{"MULTILINE", `{"pattern":"^b$","flags":["MULTILINE"]}`, text("a\nb\nc"), true, EngineRE2},
		{"M", `{"pattern":"^b$","flags":["M"]}`, text("a\nb\nc"), true, EngineRE2},
		{"no dotall", `{"pattern":"a.b"}`, text("a\nb"), false, EngineRE2},
		{"DOTALL", `{"pattern":"a.b","flags":["DOTALL"]}`, text("a\nb"), true, EngineRE2},
		{"S", `{"pattern":"a.b","flags":["S"]}`, text("a\nb"), true, EngineRE2},
		{"null never matches", `{"pattern":".*"}`, &Data{}, false, EngineRE2},
		{"nil data never matches", `{"pattern":".*"}`, nil, false, EngineRE2},
		{"empty string", `{"pattern":"^$"}`, text(""), true, EngineRE2},
		{"number text", `{"pattern":"^42$"}`, &Data{Value: 42.0, Text: "42"}, true, EngineRE2},
		{"json text", `{"pattern":"\"a\":1"}`, &Data{Value: map[string]any{"a": 1.0}, Text: `{"a":1}`}, true, EngineRE2},
		{"lookahead", `{"pattern":"foo(?=bar)"}`, text("xfoobar"), true, EngineRegexp2},
		{"lookahead no", `{"pattern":"foo(?=bar)"}`, text("foobaz"), false, EngineRegexp2},
		{"negative lookbehind", `{"pattern":"(?<!un)safe"}`, text("unsafe"), false, EngineRegexp2},
		{"negative lookbehind yes", `{"pattern":"(?<!un)safe"}`, text("is safe"), true, EngineRegexp2},
		{"backreference", `{"pattern":"(\\w)\\1"}`, text("abba"), true, EngineRegexp2},
		{"backreference no", `{"pattern":"(\\w)\\1"}`, text("abab"), false, EngineRegexp2},
		{"named backreference", `{"pattern":"(?<x>a)\\k<x>"}`, text("aa"), true, EngineRegexp2},
		{"atomic group", `{"pattern":"(?>a+)b"}`, text("aaab"), true, EngineRegexp2},
		{"regexp2 ignorecase", `{"pattern":"foo(?=BAR)","flags":["I"]}`, text("FOObar"), true, EngineRegexp2},
		{"regexp2 multiline", `{"pattern":"^b(?!x)$","flags":["M"]}`, text("a\nb\nc"), true, EngineRegexp2},
		{"regexp2 dotall", `{"pattern":"a.(?=b)","flags":["S"]}`, text("a\nb"), true, EngineRegexp2},
		{"regexp2 null", `{"pattern":"(?=a)"}`, &Data{}, false, EngineRegexp2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := buildEval(t, "regex", tt.config)
			re := ev.(*Regex)
			if re.Engine() != tt.engine {
				t.Fatalf("engine %s, want %s", re.Engine(), tt.engine)
			}
			res, err := ev.Evaluate(context.Background(), tt.data)
			if err != nil {
				t.Fatal(err)
			}
			if res.Matched != tt.want {
				t.Fatalf("matched = %v, want %v", res.Matched, tt.want)
			}
			if res.Matched && res.Metadata["engine"] != tt.engine {
				t.Errorf("metadata %v", res.Metadata)
			}
			if !res.Matched && res.Metadata != nil {
				t.Errorf("metadata on no match: %v", res.Metadata)
			}
		})
	}
}

func TestRegexInvalidPatterns(t *testing.T) {
	for _, p := range []string{"(abc", "a{2,1}", "[z-a]", "*a", `[a(?=b)`, `a++b`, `(?<=a`, `\1`, `(?P=nope)`, `x{1001}`} {
		t.Run(p, func(t *testing.T) {
			_, err := NewRegex(p, false, false, false, time.Second)
			var fe FieldError
			if !errors.As(err, &fe) || fe.Field != "pattern" || fe.Code != "invalid_regex" {
				t.Fatalf("err = %#v", err)
			}
			if strings.Contains(fe.Message, p) || strings.Contains(fe.Message, "`") {
				t.Errorf("message %q quotes the pattern", fe.Message)
			}
		})
	}
}

func TestNewRegexDirectErrors(t *testing.T) {
	if _, err := NewRegex("", false, false, false, 0); err == nil {
		t.Error("empty pattern accepted")
	}
	if _, err := NewRegex(strings.Repeat("a", MaxPatternLength+1), false, false, false, 0); err == nil {
		t.Error("long pattern accepted")
	}
	re, err := NewRegex("a", false, false, false, 0)
	if err != nil || re.timeout != DefaultTimeout {
		t.Errorf("default timeout: %v %v", re, err)
	}
}

// TestRegexCatastrophicTimesOut runs backtracking-heavy patterns on long inputs: each must give up with
// ErrMatchTimeout within the timeout plus slack, never hang.
func TestRegexCatastrophicTimesOut(t *testing.T) {
	tests := []struct{ pattern, input string }{
		{`(?=(a+)+$)`, strings.Repeat("a", 5000) + "!"},
		{`^(a|aa)+(?!x)$`, strings.Repeat("a", 5000) + "b"},
		{`^(\w+\s?)+(?<=x)$`, strings.Repeat("word ", 2000) + "!"},
		{`(a*)*\1b`, strings.Repeat("a", 5000)},
	}
	const timeout = 300 * time.Millisecond
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			re, err := NewRegex(tt.pattern, false, false, false, timeout)
			if err != nil {
				t.Fatal(err)
			}
			if re.Engine() != EngineRegexp2 {
				t.Fatalf("engine %s", re.Engine())
			}
			start := time.Now()
			_, err = re.Evaluate(context.Background(), text(tt.input))
			elapsed := time.Since(start)
			if !errors.Is(err, ErrMatchTimeout) {
				t.Fatalf("err = %v after %v, want a timeout", err, elapsed)
			}
			if strings.Contains(err.Error(), "aaaa") || strings.Contains(err.Error(), "word") {
				t.Errorf("error echoes the input: %.80s", err.Error())
			}
			if elapsed < timeout/2 || elapsed > timeout+time.Second {
				t.Errorf("took %v with a %v timeout", elapsed, timeout)
			}
		})
	}
}

func TestRegexCatastrophicRE2IsLinear(t *testing.T) {
	re, err := NewRegex(`(a+)+$`, false, false, false, time.Second)
	if err != nil || re.Engine() != EngineRE2 {
		t.Fatalf("%v %v", re, err)
	}
	res, err := re.Evaluate(context.Background(), text(strings.Repeat("a", 100000)+"!"))
	if err != nil || res.Matched {
		t.Fatalf("%v %v", res, err)
	}
}

func TestRegexCancelledContext(t *testing.T) {
	re, err := NewRegex(`a(?=b)`, false, false, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := re.Evaluate(ctx, text("ab")); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestRegexNoMatchDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	re, err := NewRegex(`\b\d{3}-\d{2}-\d{4}\b`, true, false, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	d := text(benchInput)
	ctx := context.Background()
	allocs := testing.AllocsPerRun(200, func() {
		if res, _ := re.Evaluate(ctx, d); res.Matched {
			t.Fatal("matched")
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocs per no-match evaluation", allocs)
	}
}

func TestRegexConcurrent(t *testing.T) {
	for _, p := range []string{`b\w+`, `b(?=c)`} {
		re, err := NewRegex(p, false, false, false, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan bool)
		for range 4 {
			go func() {
				ok := true
				for range 200 {
					res, err := re.Evaluate(context.Background(), text("abc"))
					ok = ok && err == nil && res.Matched
				}
				done <- ok
			}()
		}
		for range 4 {
			if !<-done {
				t.Errorf("%s: a concurrent evaluation failed", p)
			}
		}
	}
}
