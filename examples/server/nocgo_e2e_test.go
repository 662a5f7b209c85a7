package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/store/storetest"
)

// TestBinaryWithoutCgo builds guard with CGO_ENABLED=0 (whatever this test binary was built with): its
// version says "no cgo", a SQLite database URL stops it with a message saying SQLite needs a cgo build, and
// with GUARD_TEST_POSTGRES_URL set it serves PostgreSQL and is ready.
func TestBinaryWithoutCgo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "guard-nocgo")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, out)
	}
	if out, err := runBin(bin, nil, "version"); err != nil || !strings.Contains(out, "build tags: no cgo") {
		t.Fatalf("version: %v\n%s", err, out)
	}
	for _, dbURL := range []string{"", "sqlite://" + filepath.Join(t.TempDir(), "g.db"), filepath.Join(t.TempDir(), "g.db")} {
		out, err := runBin(bin, []string{"DB_URL=" + dbURL}, "serve", "--migrate")
		if err == nil || !strings.Contains(out, "SQLite needs a cgo build of guard") || !strings.Contains(out, "postgres://") {
			t.Errorf("serve on SQLite %q without cgo: %v\n%s", dbURL, err, out)
		}
	}
	if os.Getenv(storetest.PostgresEnv) == "" {
		t.Log("PostgreSQL part skipped: set " + storetest.PostgresEnv)
		return
	}
	p := startBinary(t, bin, map[string]string{"DATABASE_URL": storetest.PostgresURL(t)}, "serve", "--migrate")
	p.call(200, "GET", "/ready", nil)
	p.call(200, "PUT", "/api/v1/controls", map[string]any{"name": "c", "data": regex("x", "deny")})
	p.stop()
}
