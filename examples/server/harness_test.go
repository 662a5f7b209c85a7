package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/guardrail-control/guard/store/storetest"
)

// The end-to-end tests of this package run the real server binary, built once per test binary run.

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// buildServer builds this command once per test binary run (TestMain removes it).
func buildServer(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "guard-server-e2e")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "server")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// syncBuffer is a bytes.Buffer safe for the process's writer and the test's reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// proc is a running server process.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	base   string
	stderr *syncBuffer
	stdout *syncBuffer   // everything printed on stdout, including the "listening on" line
	exited chan struct{} // closed once the process has exited; err is set then
	err    error         // what cmd.Wait returned
}

// startServer starts the binary with env (over HOST=127.0.0.1, PORT=0 and no database, API key or
// ext.toxicity settings) and waits for /health. The process is killed at the end of the test if it still runs.
func startServer(t *testing.T, env map[string]string, args ...string) *proc {
	t.Helper()
	if db := strings.ToLower(env["DATABASE_URL"] + env["DB_URL"]); !strings.HasPrefix(db, "postgres") {
		storetest.SkipWithoutSQLite(t) // a SQLite store (the default) needs a cgo build
	}
	return startBinary(t, buildServer(t), env, args...)
}

// startBinary is startServer for a binary built elsewhere (with other build settings).
func startBinary(t *testing.T, bin string, env map[string]string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "HOST=127.0.0.1", "PORT=0", "GUARD_API_KEY_ENABLED=", "DATABASE_URL=", "DB_URL=",
		"EXT_API_KEY=", "EXT_API_URL=", "EXT_API_MODEL=")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v) // the last value of a key wins
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, stderr: &syncBuffer{}, stdout: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(io.TeeReader(stdout, p.stdout))
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				addr <- a
			}
		}
		_, _ = io.Copy(p.stdout, stdout)
	}()
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = cmd.Process.Kill()
			<-p.exited
		}
	})
	select {
	case p.base = <-addr:
	case <-p.exited:
		t.Fatalf("server exited before listening: %v\n%s", p.err, p.stderr)
	case <-time.After(60 * time.Second):
		t.Fatalf("server did not print its address\n%s", p.stderr)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := http.Get(p.base + "/health")
		if err == nil {
			_ = r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no healthy /health: %v\n%s", err, p.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exitedWithin waits up to d for the process to exit and says whether it did; p.err then holds what
// cmd.Wait returned.
func (p *proc) exitedWithin(d time.Duration) bool {
	select {
	case <-p.exited:
		return true
	case <-time.After(d):
		return false
	}
}

// stop sends SIGTERM and checks the process exits 0 within a minute.
func (p *proc) stop() {
	p.t.Helper()
	p.stopWith(syscall.SIGTERM)
}

// stopWith sends sig and checks the process exits 0 within a minute.
func (p *proc) stopWith(sig os.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
	if !p.exitedWithin(60 * time.Second) {
		p.t.Fatalf("no exit within 60s of %v\n%s", sig, p.stderr)
	}
	if p.err != nil {
		p.t.Fatalf("exit after %v: %v\n%s", sig, p.err, p.stderr)
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		p.t.Fatalf("exit code %d after %v\n%s", code, sig, p.stderr)
	}
}

// do sends a JSON request with the extra header and returns the status, the response header and the
// body.
func (p *proc) do(method, path string, body any, header map[string]string) (int, http.Header, []byte) {
	p.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			p.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, p.base+path, rd)
	if err != nil {
		p.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		p.t.Fatal(err)
	}
	return res.StatusCode, res.Header, b
}

// expect sends a JSON request, checks the status and the X-Guard-Server-Version header, and returns
// the body.
func (p *proc) expect(want int, method, path string, body any) []byte {
	p.t.Helper()
	status, header, b := p.do(method, path, body, nil)
	if status != want {
		p.t.Fatalf("%s %s: %d, want %d: %s", method, path, status, want, b)
	}
	if header.Get("X-Guard-Server-Version") == "" {
		p.t.Fatalf("%s %s: no X-Guard-Server-Version", method, path)
	}
	return b
}

// call is expect returning the body decoded as a JSON object (nil when it is not one).
func (p *proc) call(want int, method, path string, body any) map[string]any {
	p.t.Helper()
	var m map[string]any
	_ = json.Unmarshal(p.expect(want, method, path, body), &m)
	return m
}

// callInto is expect decoding the JSON answer into out (when not nil); a body that does not decode
// fails the test.
func (p *proc) callInto(want int, method, path string, body, out any) {
	p.t.Helper()
	b := p.expect(want, method, path, body)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			p.t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
}

// runBin runs the binary to its end (at most a minute) with env over no database URL, no API key
// setting and a free loopback port, and returns its combined output.
func runBin(bin string, env []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(append(os.Environ(), "DATABASE_URL=", "GUARD_API_KEY_ENABLED=", "PORT=0", "HOST=127.0.0.1"), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
