package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkCrossSiteChecks measures what the cross-site checks add to a request: the Host, Origin and
// Content-Type checks around a handler that does nothing, for the requests the hot path sees (an SDK's
// POST /evaluation, and the dashboard's same-origin POST) on a loopback listener.
func BenchmarkCrossSiteChecks(b *testing.B) {
	ts := newTS(b, WithListenAddr("127.0.0.1:8000"), WithAllowedOrigins([]string{"https://guard.example.com"}))
	noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	h := ts.srv.crossSiteOuter("POST", ts.srv.crossSiteInner("POST", noop))
	for _, tc := range []struct {
		name string
		hdr  []string
	}{
		{"sdk", []string{"Content-Type", "application/json"}},
		{"sdk-charset", []string{"Content-Type", "application/json; charset=utf-8"}},
		{"dashboard", []string{"Content-Type", "application/json", "Origin", "http://127.0.0.1:8000", "Sec-Fetch-Site", "same-origin"}},
		{"allowed-origin", []string{"Content-Type", "application/json", "Origin", "https://guard.example.com", "Sec-Fetch-Site", "cross-site"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			r := httptest.NewRequest("POST", "/api/v1/evaluation", http.NoBody)
			r.Host = "127.0.0.1:8000"
			r.ContentLength = 100
			for i := 0; i+1 < len(tc.hdr); i += 2 {
				r.Header.Set(tc.hdr[i], tc.hdr[i+1])
			}
			var w http.ResponseWriter = httptest.NewRecorder()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				h.ServeHTTP(w, r)
			}
		})
	}
}
