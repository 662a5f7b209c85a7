//go:build unix && !linux

package mcpgateway

// setSubreaper: there is no child subreaper outside Linux (FreeBSD's procctl is not used).
func setSubreaper() {}

// descendants: without /proc the watchdog knows the upstream's process group only.
func descendants(int) []int { return nil }
