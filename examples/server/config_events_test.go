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

func TestLoadConfigWriterShare(t *testing.T) {
	c, err := LoadConfig(env(nil))
	if err != nil || (c.WriterShare != 0 && c.WriterShare != observability.DefaultEvaluationWriterShare) {
		t.Fatalf("default: %v, %v; want the recorder's default %v", c.WriterShare, err, observability.DefaultEvaluationWriterShare)
	}
	if c, err = LoadConfig(env(map[string]string{"OBSERVABILITY_WRITER_SHARE": "0.5"})); err != nil || c.WriterShare != 0.5 {
		t.Fatalf("0.5: %v, %v", c.WriterShare, err)
	}
	for _, v := range []string{"0", "0.01", "1.5", "half", "-1"} {
		_, err := LoadConfig(env(map[string]string{"OBSERVABILITY_WRITER_SHARE": v}))
		if err == nil || !strings.Contains(err.Error(), "OBSERVABILITY_WRITER_SHARE") {
			t.Errorf("OBSERVABILITY_WRITER_SHARE=%s: error %v", v, err)
		}
	}
}

func TestLoadConfigReadWait(t *testing.T) {
	c, err := LoadConfig(env(nil))
	if err != nil || c.ReadWait != observability.DefaultReadWait {
		t.Fatalf("default: %v, %v; want %v", c.ReadWait, err, observability.DefaultReadWait)
	}
	if c, err = LoadConfig(env(map[string]string{"OBSERVABILITY_READ_WAIT_MS": "0"})); err != nil || c.ReadWait != 0 {
		t.Fatalf("0: %v, %v", c.ReadWait, err)
	}
	for _, v := range []string{"-1", "30001", "2s", "1.5"} {
		_, err := LoadConfig(env(map[string]string{"OBSERVABILITY_READ_WAIT_MS": v}))
		if err == nil || !strings.Contains(err.Error(), "OBSERVABILITY_READ_WAIT_MS") {
			t.Errorf("OBSERVABILITY_READ_WAIT_MS=%s: error %v", v, err)
		}
	}
}
