package policyfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/client/policyfile"
)

// TestLoadIsBounded: issue 23. Load read each path whole (os.ReadFile): /dev/zero grew without end. Now a
// file past MaxFileBytes is a *TooLargeError naming it and the cap; a regular one is refused from its size.
func TestLoadIsBounded(t *testing.T) {
	sparse := filepath.Join(t.TempDir(), "sparse.yaml")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(10 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	paths := []string{sparse}
	if _, err := os.Stat("/dev/zero"); err == nil {
		paths = append(paths, "/dev/zero")
	}
	for _, p := range paths {
		_, err := policyfile.Load([]string{p}, policyfile.Options{})
		var tl *policyfile.TooLargeError
		if !errors.As(err, &tl) || tl.Max != policyfile.MaxFileBytes || !strings.Contains(err.Error(), p) ||
			!strings.Contains(err.Error(), "64 MiB") {
			t.Fatalf("%s: err %v", p, err)
		}
	}
	if _, err := policyfile.ReadFrom(strings.NewReader(strings.Repeat(" ", policyfile.MaxFileBytes+1)), "<stdin>"); err == nil ||
		!strings.Contains(err.Error(), "<stdin>") {
		t.Fatalf("stdin past the cap: %v", err)
	}
}
