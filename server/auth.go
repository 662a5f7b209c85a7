package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"

	"github.com/guardrail-control/guard/server/problem"
)

// APIKeyHeader carries the API key.
const APIKeyHeader = "X-API-Key"

// level is the access level a route needs (docs/api.md, "Authentication").
type level int

const (
	levelPublic  level = iota // no key
	levelRuntime              // regular or admin key
	levelAdmin                // admin key
)

func (l level) String() string {
	switch l {
	case levelPublic:
		return "public"
	case levelRuntime:
		return "runtime"
	}
	return "admin"
}

// authenticator checks API keys in constant time. Keys are kept as SHA-256 digests so that every
// comparison is between two 32-byte values: subtle.ConstantTimeCompare returns at once on a length
// mismatch, which would otherwise tell a caller how long the keys are.
type authenticator struct {
	enabled bool
	regular [][]byte
	admin   [][]byte
}

// digest is the form keys are compared in.
func digest(key string) []byte {
	sum := sha256.Sum256([]byte(key))
	return sum[:]
}

func newAuthenticator(enabled bool, regular, admin []string) (*authenticator, error) {
	a := &authenticator{enabled: enabled}
	for _, k := range regular {
		if k != "" {
			a.regular = append(a.regular, digest(k))
		}
	}
	for _, k := range admin {
		if k != "" {
			a.admin = append(a.admin, digest(k))
		}
	}
	if enabled && len(a.regular) == 0 && len(a.admin) == 0 {
		return nil, errors.New("server: API key authentication is enabled (GUARD_API_KEY_ENABLED=true) but no key is configured: set GUARD_API_KEYS and/or GUARD_ADMIN_API_KEYS")
	}
	return a, nil
}

// match compares key with every configured key without stopping at the first hit, so the time taken does
// not depend on which key (if any) matched.
func match(key []byte, keys [][]byte) bool {
	found := 0
	for _, k := range keys {
		found |= subtle.ConstantTimeCompare(key, k)
	}
	return found == 1
}

// wrap guards h with the access level l.
func (a *authenticator) wrap(l level, h http.Handler) http.Handler {
	if !a.enabled || l == levelPublic {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get(APIKeyHeader)
		if key == "" {
			noteRole(w, roleNone)
			writeAuthErr(w, r, problem.CodeAuthMissingKey, "an API key is required in the X-API-Key header")
			return
		}
		kb := digest(key)
		isAdmin := match(kb, a.admin)
		isRegular := match(kb, a.regular)
		switch {
		case isAdmin:
			noteRole(w, roleAdmin)
		case isRegular:
			noteRole(w, roleRegular)
		default:
			noteRole(w, roleInvalid)
		}
		switch {
		case isAdmin:
		case isRegular && l == levelRuntime:
		case isRegular:
			problem.Write(w, r, nil, problem.New(http.StatusForbidden, problem.CodeAuthInsufficient,
				"this operation needs an admin API key"))
			return
		default:
			writeAuthErr(w, r, problem.CodeAuthInvalidKey, "the API key is not valid")
			return
		}
		h.ServeHTTP(w, r)
	})
}

func writeAuthErr(w http.ResponseWriter, r *http.Request, code, detail string) {
	e := problem.New(http.StatusUnauthorized, code, detail)
	e.Header = http.Header{"Www-Authenticate": {"ApiKey"}}
	problem.Write(w, r, nil, e)
}
