package store

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// jsonArg encodes v for a JSON column (JSONB in PostgreSQL, TEXT in SQLite). It returns a string, never
// []byte: lib/pq would send bytes as bytea, which a JSONB column refuses.
func jsonArg(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("store: encode JSON: %w", err)
	}
	return string(b), nil
}

// mapArg encodes a map for a nullable JSON column: nil stays NULL.
func mapArg(m map[string]any) (any, error) {
	if m == nil {
		return nil, nil
	}
	return jsonArg(m)
}

// scanMap decodes a nullable JSON column into a map (nil for NULL).
func scanMap(b []byte) (map[string]any, error) {
	if b == nil {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("store: decode stored JSON: %w", err)
	}
	return m, nil
}

// listKey builds a filter key (see the controls table): ',"a","b",' for [a b]. The needle for element x
// is listKey([x]); since a JSON string never holds an unescaped quote, ',"x",' can match only a whole
// element.
func listKey[T ~string](xs []T) string {
	var b strings.Builder
	b.WriteByte(',')
	for _, x := range xs {
		enc, _ := json.Marshal(string(x))
		b.Write(enc)
		b.WriteByte(',')
	}
	return b.String()
}

// scopeKey is listKey for a scope filter, where nil means "every value" (a NULL key).
func scopeKey[T ~string](xs []T) any {
	if xs == nil {
		return nil
	}
	return listKey(xs)
}

// sameJSON reports whether a stored JSON column and a given map are the same JSON value (key order and
// number spelling aside). NULL and an empty object are the same: neither constrains anything.
func sameJSON(stored []byte, given map[string]any) (bool, error) {
	a, err := scanMap(stored)
	if err != nil {
		return false, err
	}
	enc, err := json.Marshal(given)
	if err != nil {
		return false, fmt.Errorf("store: encode JSON: %w", err)
	}
	var b map[string]any
	if err := json.Unmarshal(enc, &b); err != nil {
		return false, fmt.Errorf("store: decode JSON: %w", err)
	}
	if len(a) == 0 && len(b) == 0 {
		return true, nil
	}
	return reflect.DeepEqual(a, b), nil
}
