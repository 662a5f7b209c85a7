package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/guardrail-control/guard/apikey"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

// TestAPIKeys: keys are stored by digest, listed by name, rotated and revoked once, names and digests are
// unique, and the last use only moves forward; on both dialects.
func TestAPIKeys(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := ctxT(t)
		exp := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
		if err := s.CreateAPIKey(ctx, apikey.Record{Name: "b-bot", Role: apikey.RoleRuntime, Agents: []string{"b-*"}, Digest: apikey.Digest("s1"), CreatedBy: "ops", ExpiresAt: &exp}); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateAPIKey(ctx, apikey.Record{Name: "a-wall", Role: apikey.RoleRead, Digest: apikey.Digest("s2")}); err != nil {
			t.Fatal(err)
		}
		for _, dup := range []apikey.Record{{Name: "b-bot", Role: apikey.RoleRead, Digest: apikey.Digest("s3")}, {Name: "c", Role: apikey.RoleRead, Digest: apikey.Digest("s1")}} {
			if err := s.CreateAPIKey(ctx, dup); !errors.Is(err, apikey.ErrExists) {
				t.Errorf("duplicate %s: %v, want ErrExists", dup.Name, err)
			}
		}
		keys, err := s.ListAPIKeys(ctx)
		if err != nil || len(keys) != 2 || keys[0].Name != "a-wall" || keys[1].Name != "b-bot" {
			t.Fatalf("list: %+v %v", keys, err)
		}
		b := keys[1]
		if b.Digest != apikey.Digest("s1") || b.Role != apikey.RoleRuntime || len(b.Agents) != 1 || b.Agents[0] != "b-*" ||
			b.CreatedBy != "ops" || b.ExpiresAt == nil || !b.ExpiresAt.Equal(exp) || !b.Active(time.Now()) || b.Active(exp) {
			t.Fatalf("b-bot read back as %+v", b)
		}
		if len(keys[0].Agents) != 0 || keys[0].ExpiresAt != nil {
			t.Fatalf("a-wall read back as %+v", keys[0])
		}
		rot, err := s.RotateAPIKey(ctx, "b-bot", apikey.Digest("s4"), time.Now())
		if err != nil || rot.Digest != apikey.Digest("s4") || rot.RotatedAt == nil {
			t.Fatalf("rotate: %+v %v", rot, err)
		}
		if _, err := s.RotateAPIKey(ctx, "nobody", apikey.Digest("s5"), time.Now()); !errors.Is(err, apikey.ErrNotFound) {
			t.Errorf("rotate nobody: %v", err)
		}
		if _, err := s.RotateAPIKey(ctx, "a-wall", apikey.Digest("s4"), time.Now()); !errors.Is(err, apikey.ErrExists) {
			t.Errorf("rotate to a digest in use: %v", err)
		}
		rev, err := s.RevokeAPIKey(ctx, "b-bot", "ops", time.Now())
		if err != nil || rev.RevokedAt == nil || rev.RevokedBy != "ops" {
			t.Fatalf("revoke: %+v %v", rev, err)
		}
		if _, err := s.RevokeAPIKey(ctx, "b-bot", "ops", time.Now()); !errors.Is(err, apikey.ErrRevoked) {
			t.Errorf("revoke twice: %v", err)
		}
		if _, err := s.RotateAPIKey(ctx, "b-bot", apikey.Digest("s6"), time.Now()); !errors.Is(err, apikey.ErrRevoked) {
			t.Errorf("rotate revoked: %v", err)
		}
		later, earlier := time.Now().UTC().Truncate(time.Microsecond), time.Now().Add(-time.Hour)
		if err := s.TouchAPIKeys(ctx, map[string]time.Time{"a-wall": later, "nobody": later}); err != nil {
			t.Fatal(err)
		}
		if err := s.TouchAPIKeys(ctx, map[string]time.Time{"a-wall": earlier}); err != nil {
			t.Fatal(err)
		}
		keys, _ = s.ListAPIKeys(ctx)
		if keys[0].LastUsedAt == nil || !keys[0].LastUsedAt.Equal(later) {
			t.Errorf("last used %v, want %v", keys[0].LastUsedAt, later)
		}
	})
}
