//go:build !unix

package mcpgateway

import (
	"os"
	"os/exec"
	"syscall"
)

func ownProcessGroup(*exec.Cmd, bool) {}

// supervisable: no watchdog here (it needs process groups).
const supervisable = false

func superviseCommand(*exec.Cmd, string) (*os.File, error) { return nil, nil }

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	if sig == syscall.SIGKILL {
		return cmd.Process.Kill()
	}
	return cmd.Process.Signal(sig)
}

func killGroup(*exec.Cmd, syscall.Signal) {}
