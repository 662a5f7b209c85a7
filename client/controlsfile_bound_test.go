package client

import (
	"os"
	"strings"
	"testing"
)

// TestControlsFileIsBounded: issue 23. The client's controls file (Config.ControlsFile,
// LoadControlsFile) was read whole; /dev/zero is now refused with the file and the cap in the error.
func TestControlsFileIsBounded(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, err := LoadControlsFile("/dev/zero", nil)
	if err == nil || !strings.Contains(err.Error(), "controls file") || !strings.Contains(err.Error(), "/dev/zero") ||
		!strings.Contains(err.Error(), "64 MiB, the cap on a policy file") {
		t.Fatalf("err %v", err)
	}
}
