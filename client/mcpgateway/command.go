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
	"go.uber.org/zap"
)

// DefaultTerminateDuration is how long CommandTransport waits at each step of stopping the upstream by
// default: the whole stop (end of stdin, SIGTERM, SIGKILL) then takes at most twice this, under the 2 s
// that clients (the TypeScript SDK's close) give the gateway itself before they terminate it.
const DefaultTerminateDuration = 500 * time.Millisecond

// CommandTransport is an mcp.Transport that starts an MCP server's process and speaks to it over its
// stdin and stdout as LineTransport does. It replaces mcp.CommandTransport, so that the upstream never
// outlives the gateway:
//
//   - the process runs in a process group of its own (with whatever it starts: npx's node, a shell's
//     children), and on Linux the kernel sends it SIGKILL when the gateway dies, however it dies (the
//     parent-death signal; it reaches the process started, not its children: see docs/mcp.md);
//   - Close closes the process's stdin (MCP's way of asking a stdio server to exit), waits
//     TerminateDuration for it to exit, then sends SIGTERM to its group, waits again, then kills the
//     group; what is left of the group once the process exited is killed too.
type CommandTransport struct {
	Command *exec.Cmd
	// TerminateDuration is how long Close waits for the process to exit at each step; 0 means
	// DefaultTerminateDuration.
	TerminateDuration time.Duration
	// MaxLineLength bounds one message from the process, as LineTransport.MaxLineLength.
	MaxLineLength int
	// Strict ends the connection at the first line of the process's stdout that is not a JSON-RPC message.
	// By default such a line (a library's print) is skipped, as the TypeScript SDK's client does, and
	// logged to Logger (LogInvalidLines: the first few, cut short).
	Strict bool
	// Logger receives the skipped lines; nil means they are dropped silently.
	Logger *zap.Logger
	// Supervisor, when set, is the path of a program that calls RunSupervisorIfAsked first thing (guard's
	// own binary, os.Executable()): the upstream is started under it, as a watchdog that kills the
	// upstream and every process it started when the gateway ends, however it ends (supervise.go). Empty:
	// the gateway starts the upstream itself (its children may outlive a killed gateway). Unix only;
	// ignored elsewhere.
	Supervisor string
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
	td := t.TerminateDuration
	if td <= 0 {
		td = DefaultTerminateDuration
	}
	var lifeline *os.File
	if t.Supervisor != "" && supervisable {
		if lifeline, err = superviseCommand(t.Command, t.Supervisor); err != nil {
			return nil, err
		}
	}
	ownProcessGroup(t.Command, lifeline == nil)
	if t.Command.WaitDelay == 0 {
		// Wait also waits for the copy of stderr to a writer that is not a file, which a child that
		// escaped the group could hold open: bounded.
		t.Command.WaitDelay = td
	}
	err = t.Command.Start()
	if lifeline != nil {
		// The watchdog has the read end; the gateway keeps the write end until the upstream is stopped.
		_ = t.Command.ExtraFiles[len(t.Command.ExtraFiles)-1].Close()
	}
	if err != nil {
		if lifeline != nil {
			_ = lifeline.Close()
		}
		return nil, err
	}
	var invalid func([]byte, error)
	if !t.Strict {
		invalid = LogInvalidLines(t.Logger)
	}
	// stdout is not closed by Close: the read loop ends when the process exits and its end of the pipe
	// closes (exec.Cmd.Wait closes ours).
	return newLineConn(stdout, stdin, t.MaxLineLength, invalid, func() error {
		if err := stdin.Close(); err != nil {
			return fmt.Errorf("closing stdin: %v", err)
		}
		return stopProcess(t.Command, td, lifeline)
	}), nil
}

// stopProcess waits for cmd to exit after its stdin was closed, sending SIGTERM then SIGKILL to its process
// group each after td; once it exited, what is left of its group is killed. With a watchdog (lifeline not
// nil), SIGKILL is preceded by the end of the lifeline, on which the watchdog kills the upstream and its
// descendants itself, and the lifeline is closed once the watchdog exited.
func stopProcess(cmd *exec.Cmd, td time.Duration, lifeline *os.File) error {
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if lifeline != nil {
		defer lifeline.Close()
	}
	wait := func() (error, bool) {
		t := time.NewTimer(td)
		defer t.Stop()
		select {
		case err := <-exited:
			killGroup(cmd, syscall.SIGKILL) // stragglers of an upstream that exited
			return err, true
		case <-t.C:
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if signalGroup(cmd, syscall.SIGTERM) == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if lifeline != nil {
		_ = lifeline.Close()
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := signalGroup(cmd, syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return errors.New("mcp: the upstream's process did not exit after SIGKILL")
}
