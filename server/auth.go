package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/guardrail-control/guard/apikey"

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
//
// Keys come from three places: GUARD_API_KEYS and GUARD_ADMIN_API_KEYS (fixed at start), the key file
// (replaced by setFileKeys when it is read again) and the keys made at runtime in the database (replaced
// by setStoredKeys whenever the key poller reads them: runtime_keys.go). Each change builds a new keySet
// that requests read without a lock.
type authenticator struct {
	enabled bool
	mu      sync.Mutex // serialises the rebuilds
	env     []*keyEntry
	file    []*keyEntry
	stored  []*keyEntry
	set     atomic.Pointer[keySet]
	// used is the last use of each stored key (name -> unix micro), written to the store in batches.
	used sync.Map
}

// keySet is the keys in force.
type keySet struct {
	keys   []*keyEntry
	scoped bool // some key is limited to agents: the routes check scopes (scope.go)
}

// digest is the form keys are compared in.
func digest(key string) []byte {
	sum := sha256.Sum256([]byte(key))
	return sum[:]
}

func newAuthenticator(enabled bool, regular, admin []string, named []Key) (*authenticator, error) {
	a := &authenticator{enabled: enabled}
	seen := map[string]bool{}
	add := func(e *keyEntry) {
		if seen[string(e.digest)] {
			return // a key in both lists is an admin key, as before named keys
		}
		seen[string(e.digest)] = true
		a.env = append(a.env, e)
	}
	n := 0
	for _, k := range admin {
		if k != "" {
			n++
			add(&keyEntry{name: fmt.Sprintf("%sadmin-%d", unnamedPrefix, n), digest: digest(k), admin: true})
		}
	}
	n = 0
	for _, k := range regular {
		if k != "" {
			n++
			add(&keyEntry{name: fmt.Sprintf("%sregular-%d", unnamedPrefix, n), digest: digest(k)})
		}
	}
	if err := a.setFileKeys(named); err != nil {
		return nil, err
	}
	if enabled && len(a.set.Load().keys) == 0 {
		return nil, errors.New("server: API key authentication is enabled (GUARD_API_KEY_ENABLED=true) but no key is configured: set GUARD_API_KEYS, GUARD_ADMIN_API_KEYS and/or GUARD_API_KEYS_FILE")
	}
	return a, nil
}

// setFileKeys replaces the keys of the key file. It refuses (and keeps the keys in force) a file whose key
// shares its secret with a key of GUARD_API_KEYS or GUARD_ADMIN_API_KEYS.
func (a *authenticator) setFileKeys(named []Key) error {
	var file []*keyEntry
	for _, k := range named {
		d := digest(k.Key)
		if k.Key == "" {
			b, err := hex.DecodeString(k.SHA256)
			if err != nil || len(b) != sha256.Size {
				return fmt.Errorf("server: the key named %q has no key and no valid sha256", k.Name)
			}
			d = b
		}
		file = append(file, &keyEntry{name: k.Name, digest: d, admin: k.Admin, approve: k.Approve, readOnly: k.ReadOnly,
			scope: newKeyScope(k.Agents)})
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, f := range file {
		for _, e := range a.env {
			if subtle.ConstantTimeCompare(f.digest, e.digest) == 1 {
				return fmt.Errorf("server: the key named %q has the same secret as another configured key", f.name)
			}
		}
	}
	a.file = file
	a.rebuild()
	return nil
}

// setStoredKeys replaces the keys made at runtime (revoked ones are left out; expired ones stay, refused
// by their expiry, so that expiry takes effect at once on every replica).
func (a *authenticator) setStoredKeys(recs []apikey.Record) {
	var stored []*keyEntry
	for _, r := range recs {
		if r.RevokedAt != nil {
			continue
		}
		d, err := hex.DecodeString(r.Digest)
		if err != nil || len(d) != sha256.Size {
			continue // written by the server only; never a key that cannot match
		}
		e := &keyEntry{name: r.Name, digest: d, stored: true, scope: newKeyScope(r.Agents)}
		switch r.Role {
		case apikey.RoleAdmin:
			e.admin = true
		case apikey.RoleApprove:
			e.approve = true
		case apikey.RoleRead:
			e.readOnly = true
		}
		if r.ExpiresAt != nil {
			e.expires = *r.ExpiresAt
		}
		stored = append(stored, e)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stored = stored
	a.rebuild()
}

// rebuild publishes the keys in force; a.mu is held. A stored key whose name or secret is taken by a key of
// the environment or the key file is left out (the configured one wins).
func (a *authenticator) rebuild() {
	set := &keySet{}
	names := map[string]bool{}
	digests := map[string]bool{}
	for _, group := range [][]*keyEntry{a.env, a.file, a.stored} {
		for _, e := range group {
			if names[e.name] || digests[string(e.digest)] {
				continue
			}
			names[e.name], digests[string(e.digest)] = true, true
			set.keys = append(set.keys, e)
			set.scoped = set.scoped || e.scope != nil
		}
	}
	a.set.Store(set)
}

// scoped reports whether some key in force is limited to agents.
func (a *authenticator) scoped() bool {
	set := a.set.Load()
	return set != nil && set.scoped
}

// configuredName reports whether name is the name of a key of the environment or the key file.
func (a *authenticator) configuredName(name string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, group := range [][]*keyEntry{a.env, a.file} {
		for _, e := range group {
			if e.name == name {
				return true
			}
		}
	}
	return false
}

// lookup compares the key with every key in force without stopping at the first hit, so the time taken
// does not depend on which key (if any) matched; nil when none does. Digests in force are distinct, so
// at most one matches.
func (a *authenticator) lookup(key string) *keyEntry {
	kb := sha256.Sum256([]byte(key))
	keys := a.set.Load().keys
	found := -1
	for i, e := range keys {
		found = subtle.ConstantTimeSelect(subtle.ConstantTimeCompare(kb[:], e.digest), i, found)
	}
	if found < 0 {
		return nil
	}
	return keys[found]
}

// wrap guards h with the access level l; read says whether the route only reads (a read-only key may call
// it); header is where the key is read ("": APIKeyHeader; the LLM proxy's routes read X-Guard-Key). The
// matched key goes into the request's context (KeyName).
func (a *authenticator) wrap(l level, read bool, header string, h http.Handler) http.Handler {
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
		var now time.Time
		if e != nil && (e.stored || !e.expires.IsZero()) {
			now = time.Now()
		}
		switch {
		case e == nil, !e.expires.IsZero() && !now.Before(e.expires):
			noteRole(w, roleInvalid, "")
			writeAuthErr(w, r, problem.CodeAuthInvalidKey, "the API key is not valid")
			return
		case e.admin:
			noteRole(w, roleAdmin, e.name)
		case e.readOnly:
			noteRole(w, roleRegular, e.name)
			if l != levelRuntime || !read {
				problem.Write(w, r, nil, problem.New(http.StatusForbidden, problem.CodeAuthInsufficient,
					"this API key may only read: this operation needs a runtime, approve or admin key"))
				return
			}
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
		if e.stored {
			// The last use is flushed every 30 s: a second's precision is enough, and most requests of a
			// busy key then only read the map instead of writing it.
			if v, ok := a.used.Load(e.name); !ok || now.UnixMicro()-v.(int64) >= int64(time.Second/time.Microsecond) {
				a.used.Store(e.name, now.UnixMicro())
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
