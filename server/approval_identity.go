package server

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
)

// deciderIdentity is who an approval decision is recorded as: "key:" and the first 12 hex digits of the
// SHA-256 of the API key that made the request (a fingerprint: the key itself is never stored, and an
// operator recomputes it with `printf %s "$KEY" | sha256sum | cut -c1-12`), or "anonymous" when
// authentication is off. The one place to switch to a key's name once keys are named.
func (s *Server) deciderIdentity(r *http.Request) string {
	key := r.Header.Get(APIKeyHeader)
	if key == "" || !s.auth.enabled {
		return "anonymous"
	}
	sum := sha256.Sum256([]byte(key))
	return "key:" + hex.EncodeToString(sum[:])[:12]
}
