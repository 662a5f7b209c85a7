package main

import (
	"fmt"
	"os"

	"github.com/guardrail-control/guard/server"
)

// readKeyFile reads GUARD_API_KEYS_FILE (server.ParseKeys: every problem of the file at once). A file
// that gives keys in plaintext is a secret (mode 0600, like guard.env); one of digests only is not.
func readKeyFile(path string) ([]server.Key, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("GUARD_API_KEYS_FILE: %v", err)
	}
	keys, err := server.ParseKeys(b)
	if err != nil {
		return nil, fmt.Errorf("GUARD_API_KEYS_FILE %s: %v", path, err)
	}
	return keys, nil
}
