package mcpgateway

// FastCalls is the number of tools/call g's Run served on its fast path.
func FastCalls(g *Gateway) int64 { return g.fastServed.Load() }

// RelayedCalls is the number of tools/call g relayed to the upstream itself; -1 when it has no relay.
func RelayedCalls(g *Gateway) int64 {
	if g.relay == nil {
		return -1
	}
	return g.relay.seq.Load()
}

// OnePassCalls is the number of FastCalls decoded by the one-pass decoder, and of those answered with the
// upstream's result as it came.
func OnePassCalls(g *Gateway) (decoded, verbatim int64) { return g.fastLines.Load(), g.verbatim.Load() }
