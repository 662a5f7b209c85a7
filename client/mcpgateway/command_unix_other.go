//go:build unix && !linux

package mcpgateway

import "syscall"

// setParentDeathSignal: there is no parent-death signal outside Linux.
func setParentDeathSignal(*syscall.SysProcAttr) {}
