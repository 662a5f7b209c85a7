package main

import (
	"errors"
	"strings"
	"testing"
)

func TestDescribeDatabase(t *testing.T) {
	for _, tc := range []struct{ url, kind, where string }{
		{"postgres://guard:hunter2@db.internal:5432/guard?sslmode=require&sslpassword=x", "postgres", "db.internal:5432/guard"},
		{"postgresql://db/guard", "postgres", "db/guard"},
		{"guard.db", "sqlite", "guard.db"},
		{"sqlite:///var/lib/guard/guard.db", "sqlite", "/var/lib/guard/guard.db"},
		{"file:/data/g.db?cache=private", "sqlite", "/data/g.db"},
	} {
		kind, where := describeDatabase(tc.url)
		if kind != tc.kind || where != tc.where || strings.Contains(where, "hunter2") {
			t.Errorf("%s: %s %s, want %s %s", tc.url, kind, where, tc.kind, tc.where)
		}
	}
}

func TestRedact(t *testing.T) {
	vars := env(map[string]string{"DATABASE_URL": "postgres://u:p%40ss-word@h/db", "GUARD_ADMIN_API_KEYS": "adm-key-1, adm-key-2",
		"DB_URL": "postgres://u:other-pw@h:bad/db"})
	base := errors.New("boom")
	err := redact(errors.Join(base, errors.New("p@ss-word p%40ss-word adm-key-2 other-pw")), vars)
	if msg := err.Error(); strings.Contains(msg, "ss-word") || strings.Contains(msg, "adm-key") || strings.Contains(msg, "other-pw") {
		t.Fatalf("not redacted: %q", msg)
	}
	if !errors.Is(err, base) {
		t.Fatal("the redacted error does not unwrap")
	}
	if plain := errors.New("nothing secret"); redact(plain, vars) != plain {
		t.Fatal("an error without secrets was rewrapped")
	}
}
