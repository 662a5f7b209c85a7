package mcpgateway_test

import (
	"encoding/json"
	"testing"
	"time"
)

// canon is v's JSON, for comparing JSON values.
func canon(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "!" + err.Error()
	}
	return string(b)
}

// normalise is v as it looks after a JSON round trip (numbers become float64).
func normalise(v any) any {
	var out any
	_ = json.Unmarshal([]byte(canon(v)), &out)
	return out
}

// waitFor polls cond until it holds or a deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
