//go:build !race

package observability

// raceEnabled: the race detector slows JSON decoding tenfold, so the load test shrinks under it.
const raceEnabled = false
