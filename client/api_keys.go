package client

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// APIKey is an API key as the server shows it (GET /keys): never its secret, except Key in the answer of
// CreateKey and RotateKey, where it is shown once.
type APIKey struct {
	Name       string     `json:"name"`
	Key        string     `json:"key,omitempty"`
	Role       string     `json:"role"`
	Agents     []string   `json:"agents"`
	Source     string     `json:"source"` // api, file or environment
	Status     string     `json:"status"` // active, expired or revoked
	CreatedAt  *time.Time `json:"created_at,omitempty"`
	CreatedBy  string     `json:"created_by,omitempty"`
	RotatedAt  *time.Time `json:"rotated_at,omitempty"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
	RevokedBy  string     `json:"revoked_by,omitempty"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
}

// NewAPIKey is what CreateKey makes: a name, a role (admin, runtime, approve or read), the agents it is
// limited to (none: every agent) and an optional expiry (ExpiresIn from now, or ExpiresAt).
type NewAPIKey struct {
	Name      string     `json:"name"`
	Role      string     `json:"role"`
	Agents    []string   `json:"agents,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	ExpiresIn string     `json:"expires_in,omitempty"`
}

// ListKeys lists every API key of the server (an admin key not limited to agents).
func (c *HTTPClient) ListKeys(ctx context.Context) ([]APIKey, error) {
	var out struct {
		Keys []APIKey `json:"keys"`
	}
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/keys", out: &out})
	return out.Keys, err
}

// CreateKey makes a key; the answer's Key is its secret, shown this once.
func (c *HTTPClient) CreateKey(ctx context.Context, k NewAPIKey) (APIKey, error) {
	var out APIKey
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/keys", in: k, out: &out})
	return out, err
}

// RotateKey gives a key made at runtime a new secret (the answer's Key, shown this once); the old one is
// refused from then on.
func (c *HTTPClient) RotateKey(ctx context.Context, name string) (APIKey, error) {
	var out APIKey
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/keys/" + url.PathEscape(name) + "/rotate", out: &out})
	return out, err
}

// RevokeKey revokes a key made at runtime.
func (c *HTTPClient) RevokeKey(ctx context.Context, name string) (APIKey, error) {
	var out APIKey
	_, err := c.do(ctx, call{method: http.MethodDelete, path: "/keys/" + url.PathEscape(name), out: &out})
	return out, err
}
