package llmproxy_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// newLoopback serves h on a loopback port for the test's life and returns its URL.
func newLoopback(tb testing.TB, h http.Handler) string {
	s := httptest.NewServer(h)
	tb.Cleanup(s.Close)
	return s.URL
}
