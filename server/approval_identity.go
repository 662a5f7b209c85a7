package server

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
)

// deciderIdentity is who an approval decision is recorded as: the name of the API key that made the request
// when the key file names it (KeyName, the name the audit trail records too), else "key:" and the first 12
// hex digits of the SHA-256 of the key (the keys of GUARD_ADMIN_API_KEYS have no name of their own: a
// fingerprint still tells them apart, and an operator recomputes it with
// `printf %s "$KEY" | sha256sum | cut -c1-12`), or "anonymous" when authentication is off. The key itself is
// never stored.
func (s *Server) deciderIdentity(r *http.Request) string {
	if !s.auth.enabled {
		return "anonymous"
	}
	if name := KeyName(r.Context()); name != "" && !strings.HasPrefix(name, unnamedPrefix) {
		return name
	}
	key := r.Header.Get(APIKeyHeader)
	if key == "" {
		return "anonymous"
	}
	sum := sha256.Sum256([]byte(key))
	return "key:" + hex.EncodeToString(sum[:])[:12]
}
