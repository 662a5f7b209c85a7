package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The gateway driven by the official TypeScript SDK's client (testdata/mcp-ts-client.mjs; npm
// @modelcontextprotocol/sdk, installed by .ci/mcp-servers.sh with the reference servers), as desktop
// clients built on it drive it: capability equality, the cross-server exfiltration, the kill -9 chain.

// tsClient returns node and the SDK's directory, skipping (failing under CI=true or with the servers
// installed) when they are missing.
func tsClient(t *testing.T) (node, sdk string) {
	t.Helper()
	mcpReferenceServer(t, "mcp-server-everything") // skips without $GUARD_TEST_MCP_SERVERS
	sdk = os.Getenv("GUARD_TEST_MCP_SDK")
	if sdk == "" {
		sdk = filepath.Join(os.Getenv("GUARD_TEST_MCP_SERVERS"), "..", "@modelcontextprotocol", "sdk")
	}
	if _, err := os.Stat(filepath.Join(sdk, "package.json")); err != nil {
		t.Fatalf("the TypeScript SDK is not installed (%v): source .ci/mcp-servers.sh", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	return node, sdk
}

type tsCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

type tsOut struct {
	PID     int      `json:"pid"`
	Tools   []string `json:"tools"`
	Results []struct {
		IsError bool   `json:"isError"`
		Text    string `json:"text"`
	} `json:"results"`
}

// runTS runs the TypeScript client against command (the gateway or a server) with calls.
func runTS(t *testing.T, command []string, calls []tsCall) tsOut {
	t.Helper()
	node, sdk := tsClient(t)
	spec, _ := json.Marshal(map[string]any{"command": command[0], "args": command[1:], "calls": calls})
	cmd := exec.Command(node, "testdata/mcp-ts-client.mjs", string(spec))
	cmd.Env = append(os.Environ(), "GUARD_TEST_MCP_SDK="+sdk, "GUARD_URL=", "GUARD_API_KEY=")
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("TypeScript client: %v\n%s", err, stderr)
	}
	var o tsOut
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatalf("TypeScript client output %q: %v\n%s", out, err, stderr)
	}
	return o
}

func TestMCPGatewayTypeScriptClient(t *testing.T) {
	t.Run("capabilities: the tools listed through the gateway are those listed directly", func(t *testing.T) {
		bin := mcpReferenceServer(t, "mcp-server-everything")
		direct := runTS(t, []string{bin}, nil)
		controls := filepath.Join(t.TempDir(), "controls.yaml")
		if err := os.WriteFile(controls, []byte("controls: []\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		gw := runTS(t, []string{buildServer(t), "mcp", "--agent", "ts", "--controls", controls, "--", bin}, nil)
		if len(direct.Tools) == 0 || !slices.Equal(direct.Tools, gw.Tools) {
			t.Fatalf("tools differ:\ndirect:  %v\ngateway: %v", direct.Tools, gw.Tools)
		}
	})

	t.Run("the cross-server exfiltration: stopped in one session, run in two", func(t *testing.T) {
		s := newExfilSetup(t)
		steps := s.steps("filesystem__", "fetch__")
		var calls []tsCall
		for _, st := range steps[:3] {
			calls = append(calls, tsCall{st.tool, st.args})
		}
		out := runTS(t, []string{buildServer(t), "mcp", "--agent", "desktop", "--template", "rule-of-two", "--config", s.config}, calls)
		r := out.Results
		if len(r) != 3 || r[0].IsError || !r[1].IsError || strings.Contains(r[1].Text, exfilSSN) || !strings.Contains(r[1].Text, "rule-of-two") ||
			!r[2].IsError {
			t.Fatalf("one session: %+v", r)
		}
		if _, err := os.Stat(s.out); !os.IsNotExist(err) {
			t.Fatalf("the denied write reached the filesystem server: %v", err)
		}
		// One gateway per server: two sessions, every step runs, the SSN reaches the web.
		plain := s.steps("", "")
		web := runTS(t, append([]string{buildServer(t), "mcp", "--agent", "desktop-fetch", "--template", "rule-of-two", "--"}, s.fetch...),
			[]tsCall{{plain[0].tool, plain[0].args}})
		files := runTS(t, append([]string{buildServer(t), "mcp", "--agent", "desktop-files", "--template", "rule-of-two", "--"}, s.fs...),
			[]tsCall{{plain[1].tool, plain[1].args}, {plain[2].tool, plain[2].args}})
		web2 := runTS(t, append([]string{buildServer(t), "mcp", "--agent", "desktop-fetch", "--template", "rule-of-two", "--"}, s.fetch...),
			[]tsCall{{plain[3].tool, plain[3].args}})
		for _, o := range []tsOut{web, files, web2} {
			for _, res := range o.Results {
				if res.IsError {
					t.Fatalf("two sessions: %+v", o.Results)
				}
			}
		}
		if !s.leaked() {
			t.Fatalf("the fetch with the SSN did not reach the web server: %v", s.asked)
		}
	})

	t.Run("kill -9 of the gateway with a call pending, through sh -c: nothing of the chain is left after 3 s", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			t.Skip("the watchdog's subreaper and /proc are Linux's")
		}
		node, sdk := tsClient(t)
		upstream := buildMCPServer(t)
		dir := t.TempDir()
		controls := filepath.Join(dir, "controls.yaml")
		if err := os.WriteFile(controls, []byte("controls: []\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		count := filepath.Join(dir, "calls")
		script := fmt.Sprintf("echo $$ > %s; %s --stubborn --pid-file %s --child-pid-file %s --count-file %s; :",
			filepath.Join(dir, "sh"), upstream, filepath.Join(dir, "pid"), filepath.Join(dir, "child"), count)
		spec, _ := json.Marshal(map[string]any{"command": buildServer(t),
			"args":    []string{"mcp", "--agent", "life", "--controls", controls, "--call-timeout", "0", "--", "/bin/sh", "-c", script},
			"pending": tsCall{"slow", map[string]any{"seconds": 600}}})
		cmd := exec.Command(node, "testdata/mcp-ts-client.mjs", string(spec))
		cmd.Env = append(os.Environ(), "GUARD_TEST_MCP_SDK="+sdk, "GUARD_URL=", "GUARD_API_KEY=")
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
		t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
		line, err := bufio.NewReader(stdout).ReadString('\n')
		var first struct{ PID int }
		if err != nil || json.Unmarshal([]byte(line), &first) != nil || first.PID == 0 {
			t.Fatalf("TypeScript client: %q %v\n%s", line, err, stderr)
		}
		pids := []int{readPID(t, filepath.Join(dir, "sh")), readPID(t, filepath.Join(dir, "pid")), readPID(t, filepath.Join(dir, "child"))}
		t.Cleanup(func() {
			for _, p := range pids {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
		})
		waitFor(t, "the slow call to reach the upstream", func() bool { return slices.Contains(upstreamCalls(t, count), "slow") })
		if err := syscall.Kill(first.PID, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		goneWithin(t, 3*time.Second, "after kill -9 of the gateway started by the TypeScript client", pids...)
	})
}
