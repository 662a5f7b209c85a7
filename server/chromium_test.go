package server

import (
	"os"
	"os/exec"
	"testing"
)

// chromiumOrSkip returns the path of the Chromium the browser tests drive (GUARD_TEST_CHROMIUM, or Debian's
// /usr/bin/chromium). Without one the test skips, except under CI=true, where it fails: CI installs
// Chromium, so a missing one there is a broken set-up, not a reason to pass.
func chromiumOrSkip(t *testing.T) string {
	t.Helper()
	for _, c := range []string{os.Getenv("GUARD_TEST_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p, err := exec.LookPath(c); c != "" && err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium under CI=true")
	}
	t.Skip("no Chromium found (set GUARD_TEST_CHROMIUM)")
	return ""
}
