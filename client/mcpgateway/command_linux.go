//go:build linux

package mcpgateway

import "syscall"

// setParentDeathSignal asks the kernel to SIGKILL the upstream when the gateway's process dies, even by
// SIGKILL (which leaves the gateway no time to stop it). Go does not end the OS thread that started a
// process while the program runs (the signal is tied to that thread), so it fires at the gateway's death.
func setParentDeathSignal(a *syscall.SysProcAttr) {
	if a.Pdeathsig == 0 {
		a.Pdeathsig = syscall.SIGKILL
	}
}
