//go:build !unix

package mcpgateway

import (
	"fmt"
	"os"
)

// supervise: the watchdog needs process groups; elsewhere CommandTransport starts the upstream itself.
func supervise(string, []string) int {
	fmt.Fprintln(os.Stderr, "guard mcp supervisor: not supported on this system")
	return 2
}
