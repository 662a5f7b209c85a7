package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestDemo(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out, "", false, "pre"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		"ALLOW",
		"DENY: social security numbers must not reach the model",
		"DENY: pattern matched  [prompt-injection(deny)]",
		"STEER: refunds of 1000 or more need a manager [escalate_to_manager]",
		"ALLOW",
		"ALLOW  [log-emails(log)]",
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines:\n%s", len(lines), out.String())
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d = %q, want it to contain %q", i, lines[i], w)
		}
	}
}

func TestBadInput(t *testing.T) {
	if err := run(&bytes.Buffer{}, "", false, "during"); err == nil {
		t.Error("bad stage accepted")
	}
	if _, err := loadEngine([]byte(`[{"control_id": 1, "name": "x", "data": {"condition": {}}}]`)); err == nil {
		t.Error("invalid control accepted")
	}
}

// TestControlsFileIsBounded: a controls file path naming an endless device is refused with the cap.
func TestControlsFileIsBounded(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	err := run(&bytes.Buffer{}, "/dev/zero", false, "pre")
	if err == nil || !strings.Contains(err.Error(), "64 MiB, the cap on a controls file") {
		t.Fatalf("err %v", err)
	}
}
