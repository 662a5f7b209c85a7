package extcall

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
)

// Override holds settings given in code that replace those read from the environment; the zero value
// reads the environment.
type Override[T any] struct{ p atomic.Pointer[T] }

// Set replaces the settings with a copy of *s; Set(nil) goes back to the environment.
func (o *Override[T]) Set(s *T) {
	if s == nil {
		o.p.Store(nil)
		return
	}
	c := *s
	o.p.Store(&c)
}

// Get returns the settings given to Set, or fromEnv's.
func (o *Override[T]) Get(fromEnv func() T) T {
	if s := o.p.Load(); s != nil {
		return *s
	}
	return fromEnv()
}

// CheckURL reports a URL that is not http(s) with a host, naming the setting but never the value (which
// may carry credentials).
func CheckURL(raw, setting string) error {
	if u, err := url.Parse(strings.TrimSpace(raw)); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s must be an http(s) URL", setting)
	}
	return nil
}

// RetryCount is a settings' MaxRetries with its convention applied: 0 means def, negative means none.
func RetryCount(n, def int) int {
	switch {
	case n == 0:
		return def
	case n < 0:
		return 0
	}
	return n
}

// DefaultClient does not follow redirects (the bearer token goes only to the configured URL) and keeps
// up to 64 idle connections per host, so that concurrent evaluations reuse TLS connections instead of the
// standard transport's 2.
var DefaultClient = &http.Client{
	Transport:     pooledTransport(),
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func pooledTransport() http.RoundTripper {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return http.DefaultTransport
	}
	t = t.Clone()
	t.MaxIdleConnsPerHost = 64
	return t
}
