package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The upstream of `guard mcp` never outlives it: examples/mcpserver --stubborn ignores SIGTERM and the end of
// its stdin (only SIGKILL ends it), and starts a child (sleep) in its process group.

// stopGrace is the bound the gateway keeps for stopping its upstream: under the 2 s clients (the TypeScript
// SDK's close) give the gateway before they terminate it.
const stopGrace = 2 * time.Second

// goneWithin fails the test unless every process of pids has exited within d.
func goneWithin(t *testing.T, d time.Duration, what string, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(d)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: process %d still alive %s later", what, pid, d)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// alive reports whether the process pid exists and is not a zombie (a zombie child of a process that died
// is reaped by init soon after).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	if b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat")); err == nil {
		if f := strings.Fields(string(b)); len(f) > 2 && f[2] == "Z" {
			return false
		}
	}
	return true
}

// stubbornGateway starts `guard mcp` in front of a stubborn upstream with a child; it returns the gateway
// and the pids of the upstream and its child.
func stubbornGateway(t *testing.T) (*gatewayProc, int, int) {
	t.Helper()
	upstream := buildMCPServer(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "controls.yaml")
	if err := os.WriteFile(file, []byte("controls: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, "--agent", "life", "--controls", file, "--", upstream, "--stubborn",
		"--pid-file", filepath.Join(dir, "pid"), "--child-pid-file", filepath.Join(dir, "child"))
	pid, child := readPID(t, filepath.Join(dir, "pid")), readPID(t, filepath.Join(dir, "child"))
	if res := g.call("echo", map[string]any{"text": "hi"}); resultText(res) != "echo: hi" {
		t.Fatalf("echo: %+v", res)
	}
	t.Cleanup(func() { // whatever happened, nothing is left behind by the test
		_ = syscall.Kill(pid, syscall.SIGKILL)
		_ = syscall.Kill(child, syscall.SIGKILL)
	})
	return g, pid, child
}

func TestMCPGatewayUpstreamLifecycle(t *testing.T) {
	t.Run("the client closes its side: the stubborn upstream and its child are gone promptly", func(t *testing.T) {
		g, pid, child := stubbornGateway(t)
		start := time.Now()
		if err := g.close(); err != nil {
			t.Fatalf("gateway exit: %v\n%s", err, g.stderr)
		}
		if took := time.Since(start); took > stopGrace {
			t.Errorf("the gateway took %s to exit after the client closed its side, want under %s", took, stopGrace)
		}
		goneWithin(t, stopGrace, "after the client closed", pid, child)
	})

	t.Run("SIGTERM: the stubborn upstream and its child are gone", func(t *testing.T) {
		g, pid, child := stubbornGateway(t)
		if err := g.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		goneWithin(t, stopGrace, "after the gateway's SIGTERM", pid, child)
		g.waitClosed(30 * time.Second)
		_ = g.close()
	})

	t.Run("SIGKILL: the watchdog ends the upstream and its child", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			t.Skip("the watchdog's subreaper and /proc are Linux's")
		}
		g, pid, child := stubbornGateway(t)
		if err := g.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		goneWithin(t, stopGrace, "after the gateway's SIGKILL", pid, child)
		_ = g.close()
	})

	t.Run("SIGKILL with a request pending, through a launcher chain: nothing of the chain is left after 3 s", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			t.Skip("the watchdog's subreaper and /proc are Linux's")
		}
		upstream := buildMCPServer(t)
		dir := t.TempDir()
		file := filepath.Join(dir, "controls.yaml")
		if err := os.WriteFile(file, []byte("controls: []\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		count := filepath.Join(dir, "calls")
		// sh -c stays (a command follows the server), the server ignores SIGTERM and the end of its stdin,
		// and has a child of its own: three processes below the gateway.
		script := fmt.Sprintf("echo $$ > %s; %s --stubborn --pid-file %s --child-pid-file %s --count-file %s; :",
			filepath.Join(dir, "sh"), upstream, filepath.Join(dir, "pid"), filepath.Join(dir, "child"), count)
		g := startGateway(t, "--agent", "life", "--controls", file, "--call-timeout", "0", "--", "/bin/sh", "-c", script)
		pids := []int{readPID(t, filepath.Join(dir, "sh")), readPID(t, filepath.Join(dir, "pid")), readPID(t, filepath.Join(dir, "child"))}
		t.Cleanup(func() {
			for _, p := range pids {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
		})
		go func() {
			_, _ = g.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"seconds": 600}})
		}()
		waitFor(t, "the slow call to reach the upstream", func() bool { return slices.Contains(upstreamCalls(t, count), "slow") })
		if err := g.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		goneWithin(t, 3*time.Second, "after the gateway's SIGKILL with a call pending", pids...)
		_ = g.close()
	})

	t.Run("the client closes the read side of stdout: no SIGPIPE death, the upstream is stopped", func(t *testing.T) {
		upstream := buildMCPServer(t)
		dir := t.TempDir()
		file := filepath.Join(dir, "controls.yaml")
		if err := os.WriteFile(file, []byte("controls: []\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(buildServer(t), "mcp", "--agent", "life", "--controls", file, "--", upstream, "--stubborn",
			"--pid-file", filepath.Join(dir, "pid"))
		cmd.Env = append(os.Environ(), "GUARD_URL=", "GUARD_API_KEY=")
		stderr := &syncBuffer{}
		cmd.Stderr = stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait until the gateway serves (its answer to initialize: the upstream starts once the gateway has
		// read it), then close our read side and ask again.
		if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`+"\n"); err != nil {
			t.Fatal(err)
		}
		pid := readPID(t, filepath.Join(dir, "pid"))
		t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL); _ = cmd.Process.Kill() })
		if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
			t.Fatalf("no answer to initialize: %v\n%s", err, stderr)
		}
		_ = stdout.Close()
		_, _ = io.WriteString(stdin, `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			if ee, ok := err.(*exec.ExitError); ok {
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					t.Fatalf("the gateway died by signal %v\n%s", ws.Signal(), stderr)
				}
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("the gateway did not exit after its stdout was closed\n%s", stderr)
		}
		goneWithin(t, stopGrace, "after the gateway's stdout was closed", pid)
	})
}

// TestMCPGatewayNoControls: with the server unreachable and no controls file, --no-controls decides:
// refuse does not start, deny denies every call with a message for the model, allow (the default) starts
// and says so to the client in the initialize result.
func TestMCPGatewayNoControls(t *testing.T) {
	upstream := buildMCPServer(t)
	t.Run("refuse", func(t *testing.T) {
		out, err := runBin(buildServer(t), []string{"GUARD_URL=", "GUARD_API_KEY="}, "mcp", "--agent", "nc", "--server", unreachable(t),
			"--refresh", "0", "--no-controls", "refuse", upstream)
		if err == nil || !strings.Contains(out, "no controls") || !strings.Contains(out, "not starting") {
			t.Fatalf("guard mcp --no-controls refuse: %v\n%s", err, out)
		}
	})
	t.Run("deny", func(t *testing.T) {
		g := startGatewaySession(t, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}, nil,
			"--agent", "nc", "--server", unreachable(t), "--refresh", "0", "--no-controls", "deny", upstream)
		res := g.call("echo", map[string]any{"text": "hi"})
		if !res.IsError || !strings.Contains(resultText(res), "guard has no controls") {
			t.Fatalf("a call without controls under deny: %+v", res)
		}
		if src := canonJSON(g.cs.InitializeResult().Meta["guard"]); src != `{"controls_source":"none"}` {
			t.Fatalf("_meta.guard = %s", src)
		}
		_ = g.close()
	})
	t.Run("allow", func(t *testing.T) {
		g := startGateway(t, "--agent", "nc", "--server", unreachable(t), "--refresh", "0", upstream)
		if res := g.call("echo", map[string]any{"text": "hi"}); resultText(res) != "echo: hi" {
			t.Fatalf("a call without controls under allow: %+v", res)
		}
		ir := g.cs.InitializeResult()
		if !strings.HasPrefix(ir.Instructions, "guard MCP gateway: no controls are in force") {
			t.Fatalf("instructions %q do not say there are no controls", ir.Instructions)
		}
		_ = g.close()
	})
}
