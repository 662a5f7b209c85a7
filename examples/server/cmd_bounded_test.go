package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// endlessFIFO makes a FIFO in dir whose writer goroutine writes zeros until the reader goes away.
func endlessFIFO(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "endless.fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		w, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		buf := make([]byte, 64<<10)
		for {
			if _, err := w.Write(buf); err != nil {
				return // EPIPE: the reader gave up
			}
		}
	}()
	t.Cleanup(func() {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the FIFO's writer never ended")
		}
	})
	return p
}

// TestPolicyFilesAreBounded: issue 23. `guard validate -f /dev/zero` read without a bound (24 GB RSS,
// then the kernel's kill). Every command that reads policy files now refuses /dev/zero, a FIFO that
// never ends and a 10 GB sparse file with exit status 1 and a message naming the file and the cap,
// having read at most the cap (the sparse file is refused from its size, unread).
func TestPolicyFilesAreBounded(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	inputs := []struct {
		name string
		path func(t *testing.T, dir string) string
	}{
		{"/dev/zero", func(*testing.T, string) string { return "/dev/zero" }},
		{"endless FIFO", endlessFIFO},
		{"10 GB sparse file", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "sparse.yaml")
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Truncate(10 << 30); err != nil {
				t.Fatal(err)
			}
			return p
		}},
	}
	commands := [][]string{
		{"validate", "-f"},
		{"test", "-f"},
		{"apply", "--server", "http://127.0.0.1:1", "-f"},
		{"diff", "--server", "http://127.0.0.1:1", "-f"},
	}
	for _, in := range inputs {
		for _, cmd := range commands {
			t.Run(in.name+"/"+cmd[0], func(t *testing.T) {
				p := in.path(t, t.TempDir())
				code, stdout, stderr := runPolicyCmd(t, nil, append(append([]string(nil), cmd...), p)...)
				msg := stdout + stderr
				if code != 1 || !strings.Contains(msg, p) || !strings.Contains(msg, "64 MiB, the cap on a policy file") {
					t.Fatalf("exit %d\n%s", code, msg)
				}
			})
		}
	}
}
