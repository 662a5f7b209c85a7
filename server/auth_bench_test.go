package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkAuthWrap is the authentication middleware alone around an empty handler, as POST /evaluation
// runs it: the key's lookup among 3 unnamed keys (and, scoped, a 4th named one limited to agents, whose
// scope the handler checks as evaluate does). The evaluation handler's share of the key: what the
// +0.5 µs bound of issue 26 is about, without the store's noise (BENCHMARKS.md "Named and scoped keys").
func BenchmarkAuthWrap(b *testing.B) {
	for _, scoped := range []bool{false, true} {
		b.Run(fmt.Sprintf("scoped=%v", scoped), func(b *testing.B) {
			key := "regular-key-2"
			var named []Key
			if scoped {
				key = "scoped-key"
				named = []Key{{Name: "bench-team", SHA256: fmt.Sprintf("%x", digest(key)), Agents: []string{"other", "team-*", "bench"}}}
			}
			a, err := newAuthenticator(true, []string{"regular-key-1", "regular-key-2"}, []string{"admin-key"}, named)
			if err != nil {
				b.Fatal(err)
			}
			h := a.wrap(levelRuntime, false, "", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if a.enabled && checkAgent(r.Context(), "bench", "agent_name") != nil {
					w.WriteHeader(404)
				}
			}))
			req := httptest.NewRequest("POST", "/api/v1/evaluation", nil)
			req.Header.Set(APIKeyHeader, key)
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				h.ServeHTTP(w, req)
			}
			if w.code != 0 {
				b.Fatalf("status %d", w.code)
			}
		})
	}
}
