package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/apikey"
	"github.com/guardrail-control/guard/server/problem"
)

// Keys at runtime (docs/operations.md, "Keys at runtime"): an admin key not limited to agents creates,
// lists, rotates and revokes keys through /api/v1/keys; the database holds their digests (apikey.Store).
// Every replica reads the table every keyPollInterval, so a key revoked or created on one replica is in
// force on all of them within that interval plus one query; expiry is checked on every request.

// Problem codes of the key routes.
const (
	CodeKeyNotFound = "KEY_NOT_FOUND"
	CodeKeyExists   = "KEY_EXISTS"
	CodeKeyRevoked  = "KEY_REVOKED"
	CodeKeysOff     = "KEYS_UNSUPPORTED"
)

// DefaultKeyPollInterval is how often a replica reads the keys made at runtime.
const DefaultKeyPollInterval = 500 * time.Millisecond

// keyUseFlushInterval is how often the last use of keys is written to the store.
const keyUseFlushInterval = 30 * time.Second

// maxKeyAgents bounds a key's agent list.
const maxKeyAgents = 100

// WithKeyPollInterval sets how often the server reads the keys made at runtime (DefaultKeyPollInterval);
// 0 or less: only at start and after a change made through this server.
func WithKeyPollInterval(d time.Duration) Option {
	return func(c *config) { c.keyPollInterval, c.keyPollSet = d, true }
}

// SetKeyFile replaces the keys of the key file (GUARD_API_KEYS_FILE read again: `guard serve` does it on
// SIGHUP and when the file changes). Keys of the file in force stay in force when keys is refused.
func (s *Server) SetKeyFile(keys []Key) error {
	if _, ok := s.store.(scopeStore); !ok {
		for _, k := range keys {
			if len(k.Agents) > 0 {
				return errors.New("server: a key is limited to agents but the store cannot say which agents a control is linked to")
			}
		}
	}
	return s.auth.setFileKeys(keys)
}

// keyStore is the store of runtime keys, or nil when the store has none.
func (s *Server) keyStore() apikey.Store {
	ks, _ := s.store.(apikey.Store)
	return ks
}

// startKeys loads the keys made at runtime and keeps them current until ctx ends; done is closed then.
func (s *Server) startKeys(ctx context.Context, done chan struct{}) {
	ks := s.keyStore()
	if ks == nil {
		close(done)
		return
	}
	if err := s.reloadKeys(ctx); err != nil {
		s.log.Warn("the keys made at runtime could not be read; only the configured keys are in force until they can", zap.Error(err))
	}
	interval := DefaultKeyPollInterval
	if s.cfg.keyPollSet {
		interval = s.cfg.keyPollInterval
	}
	go func() {
		defer close(done)
		var poll <-chan time.Time
		if interval > 0 {
			t := time.NewTicker(interval)
			defer t.Stop()
			poll = t.C
		}
		flush := time.NewTicker(keyUseFlushInterval)
		defer flush.Stop()
		failing := false
		for {
			select {
			case <-ctx.Done():
				s.flushKeyUse(context.Background(), ks)
				return
			case <-poll:
				err := s.reloadKeys(ctx)
				switch {
				case err != nil && !failing && ctx.Err() == nil:
					s.log.Warn("reading the keys made at runtime failed; the keys last read stay in force", zap.Error(err))
					failing = true
				case err == nil && failing:
					s.log.Info("the keys made at runtime are read again")
					failing = false
				}
			case <-flush.C:
				s.flushKeyUse(ctx, ks)
			}
		}
	}()
}

// reloadKeys reads the keys made at runtime and puts them in force.
func (s *Server) reloadKeys(ctx context.Context) error {
	ks := s.keyStore()
	if ks == nil {
		return nil
	}
	recs, err := ks.ListAPIKeys(ctx)
	if err != nil {
		return err
	}
	s.auth.setStoredKeys(recs)
	return nil
}

// flushKeyUse writes the last use of the keys used since the previous flush.
func (s *Server) flushKeyUse(ctx context.Context, ks apikey.Store) {
	used := map[string]time.Time{}
	s.auth.used.Range(func(k, v any) bool {
		used[k.(string)] = time.UnixMicro(v.(int64))
		s.auth.used.CompareAndDelete(k, v)
		return true
	})
	if len(used) == 0 {
		return
	}
	if err := ks.TouchAPIKeys(ctx, used); err != nil {
		s.log.Warn("the last use of API keys was not recorded", zap.Int("keys", len(used)), zap.Error(err))
	}
}

// keyView is a key as the API shows it: never the secret, except Key in the answer that made it.
type keyView struct {
	Name string `json:"name"`
	// Key is the secret, in the answer of a creation or a rotation only: it is shown once.
	Key    string      `json:"key,omitempty"`
	Role   apikey.Role `json:"role"`
	Agents []string    `json:"agents"`
	// Source says where the key is configured: "api" (made at runtime: it can be rotated and revoked
	// here), "file" (GUARD_API_KEYS_FILE) or "environment" (GUARD_API_KEYS, GUARD_ADMIN_API_KEYS).
	Source     string     `json:"source"`
	Status     string     `json:"status"` // active, expired, revoked
	CreatedAt  *time.Time `json:"created_at,omitempty"`
	CreatedBy  string     `json:"created_by,omitempty"`
	RotatedAt  *time.Time `json:"rotated_at,omitempty"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
	RevokedBy  string     `json:"revoked_by,omitempty"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
}

func storedKeyView(r apikey.Record, now time.Time) keyView {
	v := keyView{Name: r.Name, Role: r.Role, Agents: r.Agents, Source: "api", CreatedAt: &r.CreatedAt, CreatedBy: r.CreatedBy,
		RotatedAt: r.RotatedAt, ExpiresAt: r.ExpiresAt, RevokedAt: r.RevokedAt, RevokedBy: r.RevokedBy, LastUsedAt: r.LastUsedAt}
	if v.Agents == nil {
		v.Agents = []string{}
	}
	switch {
	case r.RevokedAt != nil:
		v.Status = "revoked"
	case !r.Active(now):
		v.Status = "expired"
	default:
		v.Status = "active"
	}
	return v
}

// configuredKeyViews are the keys of the environment and the key file, as the API shows them.
func (s *Server) configuredKeyViews() []keyView {
	s.auth.mu.Lock()
	defer s.auth.mu.Unlock()
	var out []keyView
	for source, group := range map[string][]*keyEntry{"environment": s.auth.env, "file": s.auth.file} {
		for _, e := range group {
			v := keyView{Name: e.name, Role: e.role(), Agents: orEmpty(e.scope.names()), Source: source, Status: "active"}
			out = append(out, v)
		}
	}
	return out
}

// role is the role of a configured key.
func (e *keyEntry) role() apikey.Role {
	switch {
	case e.admin:
		return apikey.RoleAdmin
	case e.approve:
		return apikey.RoleApprove
	case e.readOnly:
		return apikey.RoleRead
	}
	return apikey.RoleRuntime
}

// keyAdmin answers the checks every key route makes: a store with keys, and a key not limited to agents
// (a key that could make keys could otherwise widen its own reach).
func (s *Server) keyAdmin(w http.ResponseWriter, r *http.Request) (apikey.Store, bool) {
	if keyScoped(r.Context()) {
		s.writeErr(w, r, errOutOfScope("managing keys needs an admin key that is not limited to agents"))
		return nil, false
	}
	ks := s.keyStore()
	if ks == nil {
		s.writeErr(w, r, problem.New(http.StatusNotImplemented, CodeKeysOff, "this server's store cannot keep API keys"))
		return nil, false
	}
	return ks, true
}

func keyErr(err error) error {
	switch {
	case errors.Is(err, apikey.ErrNotFound):
		return problem.New(http.StatusNotFound, CodeKeyNotFound, "no API key of that name was made through the API")
	case errors.Is(err, apikey.ErrExists):
		return problem.New(http.StatusConflict, CodeKeyExists, "an API key of that name exists (revoked keys keep their names)")
	case errors.Is(err, apikey.ErrRevoked):
		return problem.New(http.StatusConflict, CodeKeyRevoked, "the API key is revoked")
	}
	return err
}

// GET /api/v1/keys: every key, those made at runtime (revoked ones included) and the configured ones.
func (s *Server) listKeys(w http.ResponseWriter, r *http.Request) {
	ks, ok := s.keyAdmin(w, r)
	if !ok {
		return
	}
	recs, err := ks.ListAPIKeys(r.Context())
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	now := time.Now()
	views := s.configuredKeyViews()
	for _, rec := range recs {
		views = append(views, storedKeyView(rec, now))
	}
	sort.SliceStable(views, func(i, j int) bool { return views[i].Name < views[j].Name })
	problem.Respond(w, r, s.log, http.StatusOK, map[string]any{"keys": views})
}

// GET /api/v1/keys/{key_name}
func (s *Server) getKey(w http.ResponseWriter, r *http.Request) {
	ks, ok := s.keyAdmin(w, r)
	if !ok {
		return
	}
	name := r.PathValue("key_name")
	for _, v := range s.configuredKeyViews() {
		if v.Name == name {
			problem.Respond(w, r, s.log, http.StatusOK, v)
			return
		}
	}
	rec, err := findKey(r.Context(), ks, name)
	if err != nil {
		s.writeErr(w, r, keyErr(err))
		return
	}
	problem.Respond(w, r, s.log, http.StatusOK, storedKeyView(rec, time.Now()))
}

func findKey(ctx context.Context, ks apikey.Store, name string) (apikey.Record, error) {
	recs, err := ks.ListAPIKeys(ctx)
	if err != nil {
		return apikey.Record{}, err
	}
	for _, rec := range recs {
		if rec.Name == name {
			return rec, nil
		}
	}
	return apikey.Record{}, apikey.ErrNotFound
}

// createKeyRequest is the body of POST /api/v1/keys (strict: a typo in a security setting is an error).
type createKeyRequest struct {
	Name      string     `json:"name"`
	Role      string     `json:"role"`
	Agents    []string   `json:"agents"`
	ExpiresAt *time.Time `json:"expires_at"`
	ExpiresIn *string    `json:"expires_in"`
}

// POST /api/v1/keys: a new key; the answer holds its secret, shown this once.
func (s *Server) createKey(w http.ResponseWriter, r *http.Request) {
	ks, ok := s.keyAdmin(w, r)
	if !ok {
		return
	}
	var req createKeyRequest
	if err := problem.DecodeJSON(r, &req); err != nil {
		s.writeErr(w, r, err)
		return
	}
	now := time.Now()
	var probs []guard.Problem
	bad := func(field, code, msg string) {
		probs = append(probs, guard.Problem{Field: field, Code: code, Message: msg})
	}
	switch {
	case req.Name == "":
		bad("name", "required", "is required")
	case !keyNameRE.MatchString(req.Name):
		bad("name", "pattern", "must be 1-64 characters of letters, digits and . _ : @ -, starting with a letter or digit")
	case strings.HasPrefix(req.Name, unnamedPrefix):
		bad("name", "reserved", fmt.Sprintf("may not start with %q (the names of the keys of GUARD_API_KEYS and GUARD_ADMIN_API_KEYS)", unnamedPrefix))
	}
	role := apikey.Role(req.Role)
	switch {
	case req.Role == "":
		bad("role", "required", "is required: admin, runtime, approve or read")
	case !role.Valid():
		bad("role", "enum", "must be one of admin, runtime, approve, read")
	}
	if len(req.Agents) > maxKeyAgents {
		bad("agents", "too_many", fmt.Sprintf("must list at most %d agents", maxKeyAgents))
	}
	for i, a := range req.Agents {
		if err := checkAgentPattern(a); err != nil {
			bad(fmt.Sprintf("agents.%d", i), "pattern", err.Error())
		}
	}
	var expires *time.Time
	switch {
	case req.ExpiresAt != nil && req.ExpiresIn != nil:
		bad("expires_in", "conflict", "give expires_at or expires_in, not both")
	case req.ExpiresAt != nil:
		if !req.ExpiresAt.After(now) {
			bad("expires_at", "past", "must be in the future")
		}
		t := req.ExpiresAt.UTC()
		expires = &t
	case req.ExpiresIn != nil:
		d, err := time.ParseDuration(*req.ExpiresIn)
		if err != nil || d <= 0 {
			bad("expires_in", "duration", "must be a positive duration such as 720h or 90m")
		} else {
			t := now.Add(d).UTC()
			expires = &t
		}
	}
	if len(probs) > 0 {
		s.writeErr(w, r, problem.Validation("the key is not valid", probs...))
		return
	}
	if s.auth.configuredName(req.Name) {
		s.writeErr(w, r, keyErr(apikey.ErrExists))
		return
	}
	secret, err := apikey.NewSecret()
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	agents := req.Agents
	if agents == nil {
		agents = []string{}
	}
	rec := apikey.Record{Name: req.Name, Role: role, Agents: agents, Digest: apikey.Digest(secret), CreatedAt: now.UTC(),
		CreatedBy: KeyName(r.Context()), ExpiresAt: expires}
	if err := ks.CreateAPIKey(r.Context(), rec); err != nil {
		s.writeErr(w, r, keyErr(err))
		return
	}
	s.keyChanged(w, r, "key.created", rec, fmt.Sprintf("+ key %s: role %s, agents %s, expires %s", rec.Name, rec.Role, agentList(agents), expiryText(expires)))
	v := storedKeyView(rec, now)
	v.Key = secret
	problem.Respond(w, r, s.log, http.StatusCreated, v)
}

// POST /api/v1/keys/{key_name}/rotate: a new secret for the key; the old one is refused from now on.
func (s *Server) rotateKey(w http.ResponseWriter, r *http.Request) {
	ks, ok := s.keyAdmin(w, r)
	if !ok {
		return
	}
	secret, err := apikey.NewSecret()
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	rec, err := ks.RotateAPIKey(r.Context(), r.PathValue("key_name"), apikey.Digest(secret), time.Now())
	if err != nil {
		s.writeErr(w, r, keyErr(err))
		return
	}
	s.keyChanged(w, r, "key.rotated", rec, fmt.Sprintf("~ key %s: secret replaced", rec.Name))
	v := storedKeyView(rec, time.Now())
	v.Key = secret
	problem.Respond(w, r, s.log, http.StatusOK, v)
}

// DELETE /api/v1/keys/{key_name}: revoke the key.
func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request) {
	ks, ok := s.keyAdmin(w, r)
	if !ok {
		return
	}
	rec, err := ks.RevokeAPIKey(r.Context(), r.PathValue("key_name"), KeyName(r.Context()), time.Now())
	if err != nil {
		s.writeErr(w, r, keyErr(err))
		return
	}
	s.keyChanged(w, r, "key.revoked", rec, fmt.Sprintf("- key %s: revoked", rec.Name))
	problem.Respond(w, r, s.log, http.StatusOK, storedKeyView(rec, time.Now()))
}

// keyChanged puts a change in force on this replica at once and records it in the audit trail (never the
// secret).
func (s *Server) keyChanged(w http.ResponseWriter, r *http.Request, action string, rec apikey.Record, change string) {
	ctx := context.WithoutCancel(r.Context())
	if err := s.reloadKeys(ctx); err != nil {
		s.log.Warn("the keys made at runtime could not be read after a change; the poller will retry", zap.Error(err))
	}
	as, ok := s.store.(guard.AuditStore)
	if !ok {
		return
	}
	detail, _ := json.Marshal(map[string]any{"key": rec.Name, "role": rec.Role, "agents": rec.Agents, "expires_at": rec.ExpiresAt})
	e := guard.AuditEntry{Time: time.Now(), KeyName: KeyName(ctx), Method: r.Method, Route: r.Pattern, Path: r.URL.Path,
		Action: action, Agents: rec.Agents, Changes: []string{change}, Detail: detail,
		RequestID: w.Header().Get(problem.RequestIDHeader)}
	if _, p, ok := strings.Cut(r.Pattern, " "); ok {
		e.Route = p
	}
	if _, err := as.InsertAudit(ctx, e); err != nil {
		s.log.Error("audit entry not recorded", zap.String("action", action), zap.String("key", e.KeyName), zap.Error(err))
	}
}

func agentList(agents []string) string {
	if len(agents) == 0 {
		return "all"
	}
	return "[" + strings.Join(agents, ", ") + "]"
}

func expiryText(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}

// orEmpty is l, or an empty list for nil (a JSON [] rather than null).
func orEmpty(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}
