//go:build !unix

package mcpgateway

import (
	"os/exec"
	"syscall"
)

func ownProcessGroup(*exec.Cmd) {}

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
