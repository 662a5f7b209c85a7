//go:build !unix

package mcpgateway_test

import "testing"

// processCPU is -1 where the process's CPU time is not read: no cpu-ns/op.
func processCPU(*testing.B) int64 { return -1 }
