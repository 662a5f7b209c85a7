package store

import (
	"fmt"
	"strconv"

	guard "github.com/guardrail-control/guard"
)

// The cursors of the control list and of a control's versions are the reference implementation's: the
// id (version number) of the last row of the page as a decimal integer (its clients send an integer:
// the Python SDK's list_controls and list_control_versions take cursor: int), the next page holding the
// rows with a lower key. A position, not a secret: any positive id is a valid cursor (a page starts below it), and the
// digits survive lower-casing. Signed cursors issued before (the hex form above) are still read.

// positionList reports whether list's cursors are positions: the control list, and the version lists
// ("v" and the control id, store/versions.go).
func positionList(list string) bool {
	return list == "controls" || len(list) > 1 && list[0] == 'v' && isDigits(list[1:])
}

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
