package evaluator

import (
	"regexp"
	"sync"
)

// lazyRegexp is a Go regexp compiled on first use. Its expression has been parsed by regexp/syntax with
// syntax.Perl (what regexp.Compile parses with) without error, and regexp.Compile fails only when that
// parse does (compiling a parsed expression cannot fail), so the compile cannot panic.
type lazyRegexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

func newLazyRegexp(expr string) *lazyRegexp { return &lazyRegexp{expr: expr} }

// get returns the compiled regexp, compiling it the first time.
func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.expr) })
	return l.re
}
