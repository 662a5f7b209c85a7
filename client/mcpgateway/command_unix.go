//go:build unix

package mcpgateway

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup makes cmd start in a process group of its own (whose ID is its PID), so that the
// upstream and whatever it starts are stopped together; on Linux also with the parent-death signal.
func ownProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0
	setParentDeathSignal(cmd.SysProcAttr)
}

// signalGroup sends sig to cmd's process group, or to the process alone when the group is gone.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	if err := syscall.Kill(-cmd.Process.Pid, sig); err == nil {
		return nil
	}
	return cmd.Process.Signal(sig)
}

// killGroup sends sig to what is left of cmd's process group (nothing, usually).
func killGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process != nil && cmd.SysProcAttr != nil && cmd.SysProcAttr.Setpgid {
		_ = syscall.Kill(-cmd.Process.Pid, sig)
	}
}
