package mcpgateway_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guardrail-control/guard/client/mcpgateway"
)

// fakeGatewayEnv makes the test binary a stand-in for a gateway (runFakeGatewayIfAsked): it starts the
// upstream script named by the variable through a CommandTransport, reads its first message, prints
// "ready" and waits to be killed. MCPGATEWAY_TEST_SUPERVISED=1 starts it under the watchdog.
const fakeGatewayEnv = "MCPGATEWAY_TEST_FAKE_GATEWAY"

func runFakeGatewayIfAsked() {
	script := os.Getenv(fakeGatewayEnv)
	if script == "" {
		return
	}
	ct := &mcpgateway.CommandTransport{Command: exec.Command("/bin/sh", script)}
	ct.Command.Stderr = os.Stderr
	if os.Getenv("MCPGATEWAY_TEST_SUPERVISED") == "1" {
		exe, err := os.Executable()
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		ct.Supervisor = exe
	}
	conn, err := ct.Connect(context.Background())
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	if _, err := conn.Read(context.Background()); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("ready")
	select {} // until killed
}

// upstreamChain writes a launcher chain to dir: sh chain.sh (which stays, as sh -c does with a command
// after the server) starts sh server.sh, a "server" that ignores SIGTERM, SIGHUP, SIGINT and the end of its
// stdin (exec sleep) after writing a message. Each writes its pid to a file of dir.
func upstreamChain(t *testing.T, dir string) string {
	t.Helper()
	server := filepath.Join(dir, "server.sh")
	chain := filepath.Join(dir, "chain.sh")
	files := map[string]string{
		server: "trap '' TERM HUP INT\necho $$ > " + filepath.Join(dir, "server.pid") + "\n" +
			`echo '{"jsonrpc":"2.0","id":1,"method":"ping"}'` + "\nexec sleep 600\n",
		chain: "echo $$ > " + filepath.Join(dir, "chain.pid") + "\n/bin/sh " + server + "\n:\n",
	}
	for name, body := range files {
		if err := os.WriteFile(name, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return chain
}

func readPIDFile(t *testing.T, path string) int {
	t.Helper()
	var pid int
	waitFor(t, path, func() bool {
		b, err := os.ReadFile(path)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	return pid
}

// processAlive reports whether pid is a live process (a zombie is not).
func processAlive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

// TestSupervisorKill9: a gateway killed by SIGKILL while its upstream, started through a launcher chain of
// two processes, ignores SIGTERM and the end of its stdin: under the watchdog no process of the chain is
// left 3 s later; without it (the parent-death signal alone) the server survives, which is why the watchdog
// exists.
func TestSupervisorKill9(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, supervised := range []bool{true, false} {
		t.Run(fmt.Sprintf("supervised=%v", supervised), func(t *testing.T) {
			dir := t.TempDir()
			chain := upstreamChain(t, dir)
			gw := exec.Command(exe)
			gw.Env = append(os.Environ(), fakeGatewayEnv+"="+chain, "MCPGATEWAY_TEST_SUPERVISED="+map[bool]string{true: "1", false: "0"}[supervised])
			gw.Stderr = os.Stderr
			out, err := gw.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := gw.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil || line != "ready\n" {
				_ = gw.Process.Kill()
				t.Fatalf("fake gateway: %q %v", line, err)
			}
			pids := []int{readPIDFile(t, filepath.Join(dir, "chain.pid")), readPIDFile(t, filepath.Join(dir, "server.pid"))}
			t.Cleanup(func() {
				for _, p := range pids {
					_ = syscall.Kill(p, syscall.SIGKILL)
				}
			})
			if err := gw.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = gw.Wait()
			deadline := time.Now().Add(3 * time.Second)
			left := func() (alive []int) {
				for _, p := range pids {
					if processAlive(p) {
						alive = append(alive, p)
					}
				}
				return alive
			}
			for len(left()) > 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			switch l := left(); {
			case supervised && len(l) > 0:
				t.Fatalf("processes %v of the upstream's chain %v still alive 3 s after kill -9 of the gateway", l, pids)
			case !supervised && !processAlive(pids[1]):
				t.Fatalf("without the watchdog the server %d was expected to survive (the parent-death signal reaches the first process only)", pids[1])
			}
		})
	}
}

// TestSupervisorClose: a supervised upstream's Close stops the whole chain (its server ignores SIGTERM and
// its stdin) well under the 2 s clients give a gateway, and reports the watchdog's status.
func TestSupervisorClose(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ct := &mcpgateway.CommandTransport{Command: exec.Command("/bin/sh", upstreamChain(t, dir)), Supervisor: exe,
		TerminateDuration: 200 * time.Millisecond}
	conn, err := ct.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Read(context.Background()); err != nil {
		t.Fatal(err)
	}
	pids := []int{readPIDFile(t, filepath.Join(dir, "chain.pid")), readPIDFile(t, filepath.Join(dir, "server.pid"))}
	start := time.Now()
	_ = conn.Close()
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Close took %s", took)
	}
	for _, p := range pids {
		if processAlive(p) {
			_ = syscall.Kill(p, syscall.SIGKILL)
			t.Errorf("process %d of the chain outlived Close", p)
		}
	}
	// A program that does not exist is reported by Connect, as without the watchdog.
	missing := &mcpgateway.CommandTransport{Command: exec.Command("no-such-mcp-server-anywhere"), Supervisor: exe}
	if _, err := missing.Connect(context.Background()); err == nil || !strings.Contains(err.Error(), "no-such-mcp-server-anywhere") {
		t.Fatalf("Connect of a missing program: %v", err)
	}
}
