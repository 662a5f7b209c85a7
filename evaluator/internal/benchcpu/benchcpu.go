// Package benchcpu reports the process CPU time per operation of a benchmark ("cpu-ns/op"), which on a
// shared machine with oversubscribed cores says more than wall time, which mostly measures waiting.
package benchcpu

import "testing"

// Start begins measuring; call the returned function after the benchmark loop to report cpu-ns/op.
func Start(b *testing.B) func() {
	start := processCPU()
	return func() {
		if cpu := processCPU() - start; cpu > 0 && b.N > 0 {
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		}
	}
}
