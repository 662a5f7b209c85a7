//go:build !unix

package templates_test

import "time"

func processCPU() time.Duration { return 0 }
