package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestEndToEnd runs the example: the engine must allow the first answer and deny the second through
// the custom evaluator.
func TestEndToEnd(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("output:\n%s", out.String())
	}
	if !strings.HasPrefix(lines[0], "decision=allow is_safe=true") {
		t.Errorf("first answer: %s", lines[0])
	}
	if !strings.HasPrefix(lines[1], "decision=deny is_safe=false control=no-payment-data") ||
		!strings.Contains(lines[1], "1 card") || strings.Contains(lines[1], "4111") {
		t.Errorf("second answer: %s", lines[1])
	}
}
