package evaluator

import "sync"

// A control's pattern is compiled several times when it is saved (the config checked, its tests run in
// an engine of their own, then the serving engine loaded), and controls made from one template share
// their patterns: compiledRegexes keeps the compiled RE2 form of recent patterns, so that each is
// parsed and split once per process. A Regex holds nothing that changes after NewRegex but its timeout
// and normalize, which are per control: the cache hands out copies that share the immutable parts (the
// lazily compiled programs, the branch filter, the literals).

// Bounds of the cache: past either, it starts over (patterns come from controls, which an administrator
// writes, so the working set is small; the bound is against a flood of distinct patterns).
const (
	maxCachedRegexes     = 1024
	maxCachedPatternText = 8 << 20
)

type regexCache struct {
	mu    sync.Mutex
	m     map[string]*Regex
	bytes int
}

var compiledRegexes = &regexCache{}

// get returns a copy of the compiled form of expr, when cached.
func (c *regexCache) get(expr string) (*Regex, bool) {
	c.mu.Lock()
	r, ok := c.m[expr]
	c.mu.Unlock()
	if !ok {
		return nil, false
	}
	cp := *r
	return &cp, true
}

// put caches a copy of r (an RE2 pattern as NewRegex made it) under expr.
func (c *regexCache) put(expr string, r *Regex) {
	cp := *r
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedRegexes || c.bytes+len(expr) > maxCachedPatternText {
		c.m, c.bytes = map[string]*Regex{}, 0
	}
	if _, ok := c.m[expr]; !ok {
		c.m[expr] = &cp
		c.bytes += len(expr)
	}
}

// ResetRegexCache forgets every compiled pattern, so that the next NewRegex of each parses and splits it
// again: for benchmarks and tests that measure a first compile.
func ResetRegexCache() {
	c := compiledRegexes
	c.mu.Lock()
	c.m, c.bytes = nil, 0
	c.mu.Unlock()
}
