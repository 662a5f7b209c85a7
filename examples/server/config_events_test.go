package main

import (
	"strings"
	"testing"

	"github.com/guardrail-control/guard/server/observability"
)

func TestLoadConfigEventsBuffer(t *testing.T) {
	c, err := LoadConfig(env(nil))
	if err != nil || c.ObservabilityDurable || c.BufferBytes != observability.DefaultBufferBytes {
		t.Fatalf("defaults: durable %v, buffer %d, %v", c.ObservabilityDurable, c.BufferBytes, err)
	}
	c, err = LoadConfig(env(map[string]string{"OBSERVABILITY_DURABLE": "true", "OBSERVABILITY_BUFFER_BYTES": "1048576"}))
	if err != nil || !c.ObservabilityDurable || c.BufferBytes != 1<<20 {
		t.Fatalf("values: durable %v, buffer %d, %v", c.ObservabilityDurable, c.BufferBytes, err)
	}
	for _, tc := range []struct{ name, value string }{
		{"OBSERVABILITY_DURABLE", "sometimes"},
		{"OBSERVABILITY_BUFFER_BYTES", "64MiB"},
		{"OBSERVABILITY_BUFFER_BYTES", "1048575"},
		{"OBSERVABILITY_BUFFER_BYTES", "-1"},
	} {
		_, err := LoadConfig(env(map[string]string{tc.name: tc.value}))
		if err == nil || !strings.Contains(err.Error(), tc.name) || strings.Contains(err.Error(), tc.value) {
			t.Errorf("%s=%s: error %v", tc.name, tc.value, err)
		}
	}
}
