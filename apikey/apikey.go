// Package apikey is what the server and the SQL store share about API keys managed at runtime (POST
// /api/v1/keys, `guard keys`, the dashboard's Keys page; docs/operations.md "Keys at runtime"): the stored
// record, the roles, the store interface, and how a secret is made and digested. A secret is shown once,
// when it is created or rotated; only its SHA-256 digest is stored, and keys are compared as digests in
// constant time (server/auth.go).
package apikey

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"time"
)

// Role is what a key may do.
type Role string

// The roles, as in a key file: admin (every route, within its agents), runtime (evaluate, register, read),
// approve (runtime, and deciding the approval requests of its agents), read (the read routes only: a
// dashboard on a wall, on-call).
const (
	RoleAdmin   Role = "admin"
	RoleRuntime Role = "runtime"
	RoleApprove Role = "approve"
	RoleRead    Role = "read"
)

// Roles lists the roles in the order the docs give them.
var Roles = []Role{RoleAdmin, RoleRuntime, RoleApprove, RoleRead}

// Valid reports whether r is one of Roles.
func (r Role) Valid() bool {
	for _, v := range Roles {
		if r == v {
			return true
		}
	}
	return false
}

// Record is one key as stored: never the secret.
type Record struct {
	Name string `json:"name"`
	Role Role   `json:"role"`
	// Agents limits the key to these agents (names or path.Match patterns); empty: every agent.
	Agents []string `json:"agents"`
	// Digest is the hex SHA-256 of the secret.
	Digest     string     `json:"-"`
	CreatedAt  time.Time  `json:"created_at"`
	CreatedBy  string     `json:"created_by,omitempty"`
	RotatedAt  *time.Time `json:"rotated_at,omitempty"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
	RevokedBy  string     `json:"revoked_by,omitempty"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
}

// Active reports whether the key is accepted at t: not revoked and not expired.
func (r Record) Active(t time.Time) bool {
	return r.RevokedAt == nil && (r.ExpiresAt == nil || t.Before(*r.ExpiresAt))
}

// Errors of a Store.
var (
	ErrNotFound = errors.New("apikey: no such key")
	// ErrExists: a key of that name, or with that secret, exists already (revoked keys keep their names).
	ErrExists = errors.New("apikey: a key of that name exists")
	// ErrRevoked: the key is revoked; it can be neither rotated nor revoked again.
	ErrRevoked = errors.New("apikey: the key is revoked")
)

// Store keeps the keys made at runtime. The store package implements it on SQLite and PostgreSQL.
type Store interface {
	// CreateAPIKey stores a new key; ErrExists when the name or the digest is taken.
	CreateAPIKey(ctx context.Context, rec Record) error
	// ListAPIKeys returns every key, revoked ones included, by name.
	ListAPIKeys(ctx context.Context) ([]Record, error)
	// RotateAPIKey replaces the digest of an active key (the old secret stops working at once) and
	// returns the record; ErrNotFound, ErrRevoked.
	RotateAPIKey(ctx context.Context, name, digest string, at time.Time) (Record, error)
	// RevokeAPIKey revokes a key; ErrNotFound, ErrRevoked.
	RevokeAPIKey(ctx context.Context, name, by string, at time.Time) (Record, error)
	// TouchAPIKeys records when keys were last used (name -> time); names that do not exist are ignored.
	TouchAPIKeys(ctx context.Context, used map[string]time.Time) error
}

// NewSecret makes a new secret: "gk_" and 32 random bytes in unpadded base64url (46 characters).
func NewSecret() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "gk_" + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// Digest is the hex SHA-256 of a secret: what is stored and compared.
func Digest(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}
