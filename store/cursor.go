package store

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	guard "github.com/guardrail-control/guard"
)

// Cursors are opaque to clients: base64url (no padding) of "1.<list>.<key>", where 1 is the format
// version, <list> names the list that issued it and <key> is the sort key of the last row of the page
// (an id or a version number; lists are ordered by it, descending). Keyset pagination on a monotonic key
// stays correct while rows are inserted (new rows sort before the cursor) or deleted (nothing shifts).
// The format is checked strictly, so a cursor the store did not issue is refused with guard.ErrBadCursor;
// it is not signed, so that every replica accepts every other replica's cursors.
const cursorVersion = "1"

// Page sizes: the server checks 1..100; the store clamps whatever it is given.
const (
	defaultLimit = 20
	maxLimit     = 100
)

func encodeCursor(list string, key int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorVersion + "." + list + "." + strconv.FormatInt(key, 10)))
}

// decodeCursor returns the key of a cursor issued for list, or 0 for the first page.
func decodeCursor(list, cursor string) (int64, error) {
	if cursor == "" {
		return 0, nil
	}
	bad := fmt.Errorf("store: %w", guard.ErrBadCursor)
	if len(cursor) > 128 {
		return 0, bad
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(cursor)
	if err != nil {
		return 0, bad
	}
	parts := strings.Split(string(raw), ".")
	if len(parts) != 3 || parts[0] != cursorVersion || parts[1] != list {
		return 0, bad
	}
	key, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || key <= 0 || strconv.FormatInt(key, 10) != parts[2] {
		return 0, bad
	}
	return key, nil
}

func clampLimit(n int) int {
	switch {
	case n <= 0:
		return defaultLimit
	case n > maxLimit:
		return maxLimit
	}
	return n
}

// pageInfo builds the PageInfo of a page fetched with limit+1 rows; keyOf gives the sort key of row i.
func pageInfo(list string, limit, fetched, total int, keyOf func(i int) int64) pageResult {
	info := pageResult{Limit: limit, Total: total, Rows: fetched}
	if fetched > limit {
		info.Rows = limit
		info.HasMore = true
		c := encodeCursor(list, keyOf(limit-1))
		info.NextCursor = &c
	}
	return info
}

// pageResult is guard.PageInfo plus how many fetched rows belong to the page.
type pageResult struct {
	Limit      int
	Total      int
	NextCursor *string
	HasMore    bool
	Rows       int
}

func (p pageResult) info() guard.PageInfo {
	return guard.PageInfo{Limit: p.Limit, Total: p.Total, NextCursor: p.NextCursor, HasMore: p.HasMore}
}
