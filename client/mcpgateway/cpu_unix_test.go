//go:build unix

package mcpgateway_test

import (
	"syscall"
	"testing"
)

// processCPU is the CPU time the process has used (user and system, every goroutine: the client, the
// gateway and the upstream all run in it), in nanoseconds. On a loaded machine it says more than the
// wall clock.
func processCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
