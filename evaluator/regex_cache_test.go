package evaluator

import (
	"context"
	"testing"
	"time"
)

// TestRegexCacheSharesCompiledParts: a second NewRegex of a pattern reuses its compiled parts, and the
// per-control settings (timeout, normalize) of one copy never reach another.
func TestRegexCacheSharesCompiledParts(t *testing.T) {
	ResetRegexCache()
	const pattern = `\bignore\b[^.]*\bprevious\b|\bsystem\s+prompt\b`
	a, err := NewRegex(pattern, true, false, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	a.normalize = true
	b, err := NewRegex(pattern, true, false, false, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if a == b || a.branches == nil || a.branches != b.branches || a.re2 != b.re2 {
		t.Fatalf("the second compile did not share the first's parts: %p %p", a.branches, b.branches)
	}
	if b.normalize || b.timeout != 2*time.Second || a.timeout != time.Second {
		t.Fatalf("settings leaked between copies: normalize %v, timeouts %v %v", b.normalize, a.timeout, b.timeout)
	}
	// Flags are part of the key: without IGNORECASE the pattern is another one.
	c, err := NewRegex(pattern, false, false, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if c.branches == a.branches {
		t.Fatal("a pattern compiled with other flags shared the cached one")
	}
	res, err := c.Evaluate(context.Background(), &Data{Value: "IGNORE the PREVIOUS", Text: "IGNORE the PREVIOUS"})
	if err != nil || res.Matched {
		t.Fatalf("case-sensitive copy matched upper case: %v %v", res, err)
	}
	res, err = b.Evaluate(context.Background(), &Data{Value: "IGNORE the PREVIOUS", Text: "IGNORE the PREVIOUS"})
	if err != nil || !res.Matched {
		t.Fatalf("case-insensitive copy did not match: %v %v", res, err)
	}
}
