package mcpgateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// exactObject decodes a JSON object into its members, keys compared exactly ("a" and "A" are two keys,
// never matched by encoding/json's case-insensitive field matching); a key given twice is an error naming
// it. Values are left raw.
func exactObject(raw []byte) (map[string]json.RawMessage, error) {
	_, m, err := exactMembers(raw)
	return m, err
}

// exactMembers is exactObject that also returns the keys in their order.
func exactMembers(raw []byte) ([]string, map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("must be a JSON object")
	}
	var keys []string
	out := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		key := tok.(string) // an object's member starts with its key
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", key, err)
		}
		if _, dup := out[key]; dup {
			return nil, nil, fmt.Errorf("%s: the key is given twice", key)
		}
		out[key] = v
		keys = append(keys, key)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	if dec.More() {
		return nil, nil, errors.New("data after the object")
	}
	return keys, out, nil
}

// hasKeys reports which of keys the object raw has (exact comparison); nil when raw is not an object.
func hasKeys(raw []byte, keys ...string) map[string]bool {
	m, err := exactObject(raw)
	if err != nil {
		return nil
	}
	out := map[string]bool{}
	for _, k := range keys {
		if v, ok := m[k]; ok && string(bytes.TrimSpace(v)) != "null" {
			out[k] = true
		}
	}
	return out
}
