package mcpgateway

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CommandTransport is an mcp.Transport that starts an MCP server's process and speaks to it over its
// stdin and stdout as LineTransport does. It replaces mcp.CommandTransport, with the same shutdown: Close
// closes the process's stdin (MCP's way of asking a stdio server to exit), waits TerminateDuration for it
// to exit, then sends SIGTERM, waits again, then kills it.
type CommandTransport struct {
	Command *exec.Cmd
	// TerminateDuration is how long Close waits for the process to exit at each step; 0 means 5 seconds.
	TerminateDuration time.Duration
	// MaxLineLength bounds one message from the process, as LineTransport.MaxLineLength.
	MaxLineLength int
}

// Connect implements mcp.Transport: it starts the process.
func (t *CommandTransport) Connect(context.Context) (mcp.Connection, error) {
	stdout, err := t.Command.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.Command.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.Command.Start(); err != nil {
		return nil, err
	}
	td := t.TerminateDuration
	if td <= 0 {
		td = 5 * time.Second
	}
	// stdout is not closed by Close: the read loop ends when the process exits and its end of the pipe
	// closes (exec.Cmd.Wait closes ours).
	return newLineConn(stdout, stdin, t.MaxLineLength, func() error {
		if err := stdin.Close(); err != nil {
			return fmt.Errorf("closing stdin: %v", err)
		}
		return stopProcess(t.Command, td)
	}), nil
}

// stopProcess waits for cmd to exit after its stdin was closed, sending SIGTERM then SIGKILL each after td.
func stopProcess(cmd *exec.Cmd, td time.Duration) error {
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	wait := func() (error, bool) {
		t := time.NewTimer(td)
		defer t.Stop()
		select {
		case err := <-exited:
			return err, true
		case <-t.C:
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if cmd.Process.Signal(syscall.SIGTERM) == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return errors.New("mcp: the upstream's process did not exit after SIGKILL")
}
