//go:build unix

package mcpgateway

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// ownProcessGroup makes cmd start in a process group of its own (whose ID is its PID), so that the
// upstream and whatever it starts are stopped together; on Linux also with the parent-death signal when
// pdeath (a watchdog is not given it: it must outlive the gateway long enough to kill the upstream).
func ownProcessGroup(cmd *exec.Cmd, pdeath bool) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0
	if pdeath {
		setParentDeathSignal(cmd.SysProcAttr)
	}
}

// supervisable: the watchdog runs here (supervise.go).
const supervisable = true

// superviseCommand rewrites cmd to run under the watchdog supervisor (supervise.go): the watchdog gets the
// command's program and argv as arguments, and the read end of the lifeline as its last extra file. It
// returns the lifeline's write end, which the caller keeps; the read end is closed by the caller after
// Start.
func superviseCommand(cmd *exec.Cmd, supervisor string) (*os.File, error) {
	if cmd.Err != nil {
		return nil, cmd.Err // the program was not found: Start says so
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	env := cmd.Environ()
	kept := env[:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, SupervisorEnv+"=") {
			kept = append(kept, kv)
		}
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, r)
	cmd.Env = append(kept, SupervisorEnv+"="+strconv.Itoa(2+len(cmd.ExtraFiles)))
	cmd.Args = append([]string{supervisor, cmd.Path}, cmd.Args...)
	cmd.Path = supervisor
	return w, nil
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
