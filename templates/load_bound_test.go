package templates_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/templates"
)

// TestLoadBoundsEachFile: issue 23. A template file larger than templates.MaxFileBytes (here a 10 GB
// sparse file, /dev/zero behind a symlink) is refused with an error naming it and the cap, without
// reading it whole.
func TestLoadBoundsEachFile(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, dir string)
	}{
		{"10 GB sparse file", func(t *testing.T, dir string) {
			f, err := os.Create(filepath.Join(dir, "huge.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Truncate(10 << 30); err != nil {
				t.Fatal(err)
			}
		}},
		{"/dev/zero", func(t *testing.T, dir string) {
			if _, err := os.Stat("/dev/zero"); err != nil {
				t.Skip("no /dev/zero")
			}
			if err := os.Symlink("/dev/zero", filepath.Join(dir, "huge.yaml")); err != nil {
				t.Skipf("symlink: %v", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.make(t, dir)
			_, err := templates.Load(os.DirFS(dir))
			if err == nil || !strings.Contains(err.Error(), "huge.yaml") || !strings.Contains(err.Error(), "1 MiB, the cap on a template file") {
				t.Fatalf("err %v", err)
			}
		})
	}
}
