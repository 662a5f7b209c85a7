//go:build unix

package benchcpu

import (
	"syscall"
	"time"
)

// processCPU returns the user+system CPU time of the process so far (all threads, GC included).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
