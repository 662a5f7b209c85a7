package boundedread

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"
)

// wantTooLarge checks that err is a *TooLargeError naming name and the cap.
func wantTooLarge(t *testing.T, err error, name string, max int64) {
	t.Helper()
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Name != name || tl.Max != max {
		t.Fatalf("err %v, want a TooLargeError for %s at %d", err, name, max)
	}
	if !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), Size(max)) {
		t.Fatalf("message %q names neither the input nor the cap", err)
	}
}

// TestFileBounds: the three inputs of issue 23 (a device that never ends, a FIFO that never ends, a
// 10 GB sparse file) are refused with the cap in the message, having read at most the cap plus one byte.
func TestFileBounds(t *testing.T) {
	const max = 1 << 20
	dir := t.TempDir()

	t.Run("/dev/zero", func(t *testing.T) {
		if _, err := os.Stat("/dev/zero"); err != nil {
			t.Skip("no /dev/zero")
		}
		_, err := File("/dev/zero", "policy file", max)
		wantTooLarge(t, err, "/dev/zero", max)
	})

	t.Run("endless FIFO", func(t *testing.T) {
		if runtime.GOOS == "windows" {
			t.Skip("no mkfifo")
		}
		fifo := filepath.Join(dir, "fifo")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		wrote := make(chan int64, 1)
		go func() {
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				wrote <- -1
				return
			}
			defer w.Close()
			buf := make([]byte, 64<<10)
			var n int64
			for {
				select {
				case <-stop:
					wrote <- n
					return
				default:
				}
				k, err := w.Write(buf)
				n += int64(k)
				if err != nil { // EPIPE once the reader has given up
					wrote <- n
					return
				}
			}
		}()
		_, err := File(fifo, "policy file", max)
		close(stop)
		wantTooLarge(t, err, fifo, max)
		select {
		case <-wrote:
		case <-time.After(10 * time.Second):
			t.Fatal("the writer never ended")
		}
	})

	t.Run("10 GB sparse file", func(t *testing.T) {
		p := filepath.Join(dir, "sparse")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(10 << 30); err != nil { // no blocks: no disk used
			t.Fatal(err)
		}
		f.Close()
		_, err = File(p, "policy file", max)
		wantTooLarge(t, err, p, max)
	})

	t.Run("at the cap", func(t *testing.T) {
		p := filepath.Join(dir, "exact")
		if err := os.WriteFile(p, make([]byte, max), 0o600); err != nil {
			t.Fatal(err)
		}
		if raw, err := File(p, "policy file", max); err != nil || len(raw) != max {
			t.Fatalf("%d bytes, %v", len(raw), err)
		}
		if err := os.WriteFile(p, make([]byte, max+1), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := File(p, "policy file", max)
		wantTooLarge(t, err, p, max)
	})

	t.Run("a directory", func(t *testing.T) {
		if _, err := File(dir, "policy file", max); err == nil || !strings.Contains(err.Error(), "is a directory") {
			t.Fatalf("err %v", err)
		}
	})

	t.Run("fs.FS", func(t *testing.T) {
		fsys := fstest.MapFS{"big.yaml": {Data: make([]byte, 2<<10)}, "ok.yaml": {Data: []byte("name: x")}}
		_, err := FSFile(fsys, "big.yaml", "template file", 1<<10)
		wantTooLarge(t, err, "big.yaml", 1<<10)
		if raw, err := FSFile(fsys, "ok.yaml", "template file", 1<<10); err != nil || string(raw) != "name: x" {
			t.Fatalf("%q %v", raw, err)
		}
	})
}

// TestReadEndlessStream: a stream is read at most to the cap plus one byte.
func TestReadEndlessStream(t *testing.T) {
	r := &countingZero{}
	_, err := Read(r, "<stdin>", "policy file", 1<<16)
	wantTooLarge(t, err, "<stdin>", 1<<16)
	if r.n > 1<<16+1 {
		t.Fatalf("read %d bytes, more than the cap plus one", r.n)
	}
}

type countingZero struct{ n int }

func (z *countingZero) Read(p []byte) (int, error) {
	clear(p)
	z.n += len(p)
	return len(p), nil
}
