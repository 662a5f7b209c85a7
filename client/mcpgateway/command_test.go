//go:build unix

package mcpgateway

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestCommandTransport: the process's stdout is read as messages, and Close stops the process the way the
// SDK's CommandTransport does: close its stdin, then SIGTERM, then SIGKILL.
func TestCommandTransport(t *testing.T) {
	tests := []struct {
		name    string
		script  string
		wantErr string // in Close's error; "" for a clean exit
	}{
		{"exits when its stdin closes", `echo '{"jsonrpc":"2.0","id":1,"method":"ping"}'; cat >/dev/null`, ""},
		{"ignores its stdin: SIGTERM", `echo '{"jsonrpc":"2.0","id":1,"method":"ping"}'; exec sleep 30`, "terminated"},
		{"ignores SIGTERM too: SIGKILL", `trap '' TERM; echo '{"jsonrpc":"2.0","id":1,"method":"ping"}'; exec sleep 30`, "killed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ct := &CommandTransport{Command: exec.Command("/bin/sh", "-c", tc.script), TerminateDuration: 200 * time.Millisecond}
			conn, err := ct.Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			msg, err := conn.Read(ctx)
			if req, ok := msg.(*jsonrpc.Request); err != nil || !ok || req.Method != "ping" {
				t.Fatalf("Read = %v, %v; want the ping", msg, err)
			}
			closed := make(chan error, 1)
			go func() { closed <- conn.Close() }()
			select {
			case err := <-closed:
				if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
					t.Fatalf("Close = %v, want %q", err, tc.wantErr)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Close did not stop the process")
			}
			if ct.Command.ProcessState == nil {
				t.Fatal("Close returned before the process was waited for")
			}
		})
	}
}
