//go:build !race

package evaluator

const raceEnabled = false
