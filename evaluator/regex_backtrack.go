package evaluator

import (
	"errors"
	"sync"
	"time"

	"github.com/dlclark/regexp2"
)

// maxIdleBacktrackers bounds the compiled copies of one pattern kept for reuse; copies beyond it (made
// under a burst of concurrent matches) are left to the garbage collector.
const maxIdleBacktrackers = 32

// errRecompile is returned if a pattern that compiled once fails to compile again (it cannot happen).
var errRecompile = errors.New("regex could not be prepared")

// backtracker runs one regexp2 pattern with a match timeout chosen per call. regexp2 reads the timeout
// from a field of its Regexp when a match starts, so setting it on a shared Regexp would race with
// concurrent matches: each match takes a compiled copy of its own from an idle list, and a new copy is
// compiled only when every copy is in use.
type backtracker struct {
	pattern string
	opts    regexp2.RegexOptions
	mu      sync.Mutex
	idle    []*regexp2.Regexp
}

func newBacktracker(pattern string, opts regexp2.RegexOptions, first *regexp2.Regexp) *backtracker {
	return &backtracker{pattern: pattern, opts: opts, idle: []*regexp2.Regexp{first}}
}

// match reports whether the pattern occurs in text, giving up after timeout (regexp2's error then).
func (b *backtracker) match(text string, timeout time.Duration) (bool, error) {
	re, err := b.get()
	if err != nil {
		return false, err
	}
	defer b.put(re)
	re.MatchTimeout = timeout
	return re.MatchString(text)
}

func (b *backtracker) get() (*regexp2.Regexp, error) {
	b.mu.Lock()
	if n := len(b.idle); n > 0 {
		re := b.idle[n-1]
		b.idle = b.idle[:n-1]
		b.mu.Unlock()
		return re, nil
	}
	b.mu.Unlock()
	re, err := regexp2.Compile(b.pattern, b.opts)
	if err != nil {
		return nil, errRecompile
	}
	return re, nil
}

func (b *backtracker) put(re *regexp2.Regexp) {
	b.mu.Lock()
	if len(b.idle) < maxIdleBacktrackers {
		b.idle = append(b.idle, re)
	}
	b.mu.Unlock()
}
