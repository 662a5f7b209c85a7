//go:build race

package evaluator

// raceEnabled: the race detector makes sync.Pool drop items at random (regexp keeps its matchers in one), so
// allocation counts are asserted only without it, in CI's allocation step.
const raceEnabled = true
