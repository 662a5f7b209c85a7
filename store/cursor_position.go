package store

import (
	"fmt"
	"strconv"

	guard "github.com/guardrail-control/guard"
)

// The control list's cursor is the reference implementation's: the id of the last control of the page
// as a decimal integer (its clients send an integer), the next page holding the controls with a lower
// id. A position, not a secret: any positive id is a valid cursor (a page starts below it), and the
// digits survive lower-casing. Signed cursors issued before (the hex form above) are still read.

// positionLists are the lists whose cursors are positions.
var positionLists = map[string]bool{"controls": true}

// isDigits reports whether s is a non-empty run of ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// decodePosition reads a position cursor: a positive integer without leading zeros that fits an id.
func decodePosition(cursor string) (int64, error) {
	key, err := strconv.ParseInt(cursor, 10, 64)
	if err != nil || key <= 0 || cursor[0] == '0' {
		return 0, fmt.Errorf("store: %w", guard.ErrBadCursor)
	}
	return key, nil
}
