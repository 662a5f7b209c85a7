package store

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"

	guard "github.com/guardrail-control/guard"
)

// Cursors are opaque to clients: "c" (the format), the sort key of the last row of the page as 16
// lower-case hex digits (an id or a version number; lists are ordered by it, descending), and 32 hex digits
// of an HMAC-SHA256 over the list's name and the key, keyed by the database's cursor secret (migration
// 00004, table server_secrets). Keyset pagination on a monotonic key stays correct while rows are inserted
// (new rows sort before the cursor) or deleted (nothing shifts).
//
// Why this shape: the reference implementation's SDKs validate a cursor like an agent name (lower-cased,
// at least 10 characters), so a cursor is 49 characters of [0-9a-f] and survives lower-casing. The MAC
// makes a cursor the server did not issue (forged, edited, from another list or another database) a
// guard.ErrBadCursor like a malformed one, and the secret lives in the database, so every replica on it
// accepts every other replica's cursors.
const (
	cursorPrefix = "c"
	cursorKeyHex = 16
	cursorMACHex = 32
	cursorLen    = len(cursorPrefix) + cursorKeyHex + cursorMACHex
)

// Page sizes: the server checks 1..100; the store clamps whatever it is given.
const (
	defaultLimit = 20
	maxLimit     = 100
)

// cursorSecretName is the row of server_secrets that keys cursor MACs.
const cursorSecretName = "cursor_hmac"

// cursorKey returns the database's cursor secret, read once and then cached.
func (s *Store) cursorKey(ctx context.Context) ([]byte, error) {
	s.cursorMu.Lock()
	defer s.cursorMu.Unlock()
	if s.cursorSecret != nil {
		return s.cursorSecret, nil
	}
	var v string
	if err := s.r.GetContext(ctx, &v, s.q(`SELECT value FROM server_secrets WHERE name = ?`), cursorSecretName); err != nil {
		return nil, mapErr(err)
	}
	if len(v) < 32 {
		return nil, fmt.Errorf("store: the cursor secret of this database is too short")
	}
	s.cursorSecret = []byte(v)
	return s.cursorSecret, nil
}

func cursorMAC(secret []byte, list string, key uint64) string {
	m := hmac.New(sha256.New, secret)
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], key)
	m.Write([]byte(list))
	m.Write([]byte{0})
	m.Write(b[:])
	return hex.EncodeToString(m.Sum(nil))[:cursorMACHex]
}

func (s *Store) encodeCursor(ctx context.Context, list string, key int64) (string, error) {
	if positionList(list) { // cursor_position.go
		return strconv.FormatInt(key, 10), nil
	}
	secret, err := s.cursorKey(ctx)
	if err != nil {
		return "", err
	}
	k := fmt.Sprintf("%016x", uint64(key))
	return cursorPrefix + k + cursorMAC(secret, list, uint64(key)), nil
}

// decodeCursor returns the key of a cursor issued for list by a store on this database, or 0 for the
// first page.
func (s *Store) decodeCursor(ctx context.Context, list, cursor string) (int64, error) {
	if cursor == "" {
		return 0, nil
	}
	if positionList(list) && isDigits(cursor) { // cursor_position.go
		return decodePosition(cursor)
	}
	bad := fmt.Errorf("store: %w", guard.ErrBadCursor)
	if len(cursor) != cursorLen || !strings.HasPrefix(cursor, cursorPrefix) || !lowerHex(cursor[len(cursorPrefix):]) {
		return 0, bad
	}
	keyHex := cursor[len(cursorPrefix) : len(cursorPrefix)+cursorKeyHex]
	key, err := strconv.ParseUint(keyHex, 16, 64)
	if err != nil || key == 0 || key > math.MaxInt64 {
		return 0, bad
	}
	secret, err := s.cursorKey(ctx)
	if err != nil {
		return 0, err
	}
	if !hmac.Equal([]byte(cursor[len(cursorPrefix)+cursorKeyHex:]), []byte(cursorMAC(secret, list, key))) {
		return 0, bad
	}
	return int64(key), nil
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
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
func (s *Store) pageInfo(ctx context.Context, list string, limit, fetched, total int, keyOf func(i int) int64) (pageResult, error) {
	info := pageResult{Limit: limit, Total: total, Rows: fetched}
	if fetched > limit {
		info.Rows = limit
		info.HasMore = true
		c, err := s.encodeCursor(ctx, list, keyOf(limit-1))
		if err != nil {
			return pageResult{}, err
		}
		info.NextCursor = &c
	}
	return info, nil
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
