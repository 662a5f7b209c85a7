package sessionredis

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives the tests: every Store's subscription must end
// with Close.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
