package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"

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
	levelApprove              // admin key, or a key with the approve permission (deciding approval requests)
)

func (l level) String() string {
	switch l {
	case levelPublic:
		return "public"
	case levelRuntime:
		return "runtime"
	case levelApprove:
		return "approve"
	}
	return "admin"
}

// authenticator checks API keys in constant time. Keys are kept as SHA-256 digests so that every
// comparison is between two 32-byte values: subtle.ConstantTimeCompare returns at once on a length
// mismatch, which would otherwise tell a caller how long the keys are. It is also what lets a key file
// give a key by its digest (keys.go).
type authenticator struct {
	enabled bool
	keys    []*keyEntry
	scoped  bool // some key is limited to agents: the routes check scopes (scope.go)
}

// digest is the form keys are compared in.
func digest(key string) []byte {
	sum := sha256.Sum256([]byte(key))
	return sum[:]
}

func newAuthenticator(enabled bool, regular, admin []string, named []Key) (*authenticator, error) {
	a := &authenticator{enabled: enabled}
	seen := map[string]bool{}
	add := func(e *keyEntry) error {
		if seen[string(e.digest)] {
			if strings.HasPrefix(e.name, unnamedPrefix+"regular-") {
				return nil // a key in both lists is an admin key, as before named keys
			}
			return fmt.Errorf("server: the key named %q has the same secret as another configured key", e.name)
		}
		seen[string(e.digest)] = true
		a.keys = append(a.keys, e)
		if e.scope != nil {
			a.scoped = true
		}
		return nil
	}
	n := 0
	for _, k := range admin {
		if k != "" {
			n++
			_ = add(&keyEntry{name: fmt.Sprintf("%sadmin-%d", unnamedPrefix, n), digest: digest(k), admin: true})
		}
	}
	n = 0
	for _, k := range regular {
		if k != "" {
			n++
			_ = add(&keyEntry{name: fmt.Sprintf("%sregular-%d", unnamedPrefix, n), digest: digest(k)})
		}
	}
	for _, k := range named {
		d := digest(k.Key)
		if k.Key == "" {
			b, err := hex.DecodeString(k.SHA256)
			if err != nil || len(b) != sha256.Size {
				return nil, fmt.Errorf("server: the key named %q has no key and no valid sha256", k.Name)
			}
			d = b
		}
		if err := add(&keyEntry{name: k.Name, digest: d, admin: k.Admin, approve: k.Approve, scope: newKeyScope(k.Agents)}); err != nil {
			return nil, err
		}
	}
	if enabled && len(a.keys) == 0 {
		return nil, errors.New("server: API key authentication is enabled (GUARD_API_KEY_ENABLED=true) but no key is configured: set GUARD_API_KEYS, GUARD_ADMIN_API_KEYS and/or GUARD_API_KEYS_FILE")
	}
	return a, nil
}

// lookup compares the key with every configured key without stopping at the first hit, so the time taken
// does not depend on which key (if any) matched; nil when none does. Configured digests are distinct, so
// at most one matches.
func (a *authenticator) lookup(key string) *keyEntry {
	kb := sha256.Sum256([]byte(key))
	found := -1
	for i, e := range a.keys {
		found = subtle.ConstantTimeSelect(subtle.ConstantTimeCompare(kb[:], e.digest), i, found)
	}
	if found < 0 {
		return nil
	}
	return a.keys[found]
}

// wrap guards h with the access level l. The matched key goes into the request's context (KeyName).
// header is where the key is read ("": APIKeyHeader; the LLM proxy's routes read X-Guard-Key).
func (a *authenticator) wrap(l level, header string, h http.Handler) http.Handler {
	if !a.enabled || l == levelPublic {
		return h
	}
	if header == "" {
		header = APIKeyHeader
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get(header)
		if key == "" {
			noteRole(w, roleNone, "")
			writeAuthErr(w, r, problem.CodeAuthMissingKey, "an API key is required in the "+header+" header")
			return
		}
		e := a.lookup(key)
		switch {
		case e == nil:
			noteRole(w, roleInvalid, "")
			writeAuthErr(w, r, problem.CodeAuthInvalidKey, "the API key is not valid")
			return
		case e.admin:
			noteRole(w, roleAdmin, e.name)
		default:
			noteRole(w, roleRegular, e.name)
			switch {
			case l == levelRuntime, l == levelApprove && e.approve:
			case l == levelApprove:
				problem.Write(w, r, nil, problem.New(http.StatusForbidden, problem.CodeAuthInsufficient,
					"deciding an approval request needs an admin API key or a key with the approve permission"))
				return
			default:
				problem.Write(w, r, nil, problem.New(http.StatusForbidden, problem.CodeAuthInsufficient,
					"this operation needs an admin API key"))
				return
			}
		}
		h.ServeHTTP(w, r.WithContext(withIdentity(r.Context(), e)))
	})
}

func writeAuthErr(w http.ResponseWriter, r *http.Request, code, detail string) {
	e := problem.New(http.StatusUnauthorized, code, detail)
	e.Header = http.Header{"Www-Authenticate": {"ApiKey"}}
	problem.Write(w, r, nil, e)
}
