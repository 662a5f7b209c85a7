package main

import (
	"strings"
	"testing"
)

// TestOTelConfig: export is on with an OTLP endpoint or GUARD_OTEL=true, off by default, with
// GUARD_OTEL=false or OTEL_SDK_DISABLED=true; a protocol other than http/protobuf or grpc stops the start
// only when export is on; a malformed endpoint stops it naming the variable.
func TestOTelConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		on      bool
		wantErr string
	}{
		{"default off", nil, false, ""},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true, ""},
		{"traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://collector/v1/traces"}, true, ""},
		{"switch on, default endpoint", map[string]string{"GUARD_OTEL": "true"}, true, ""},
		{"switch off wins over endpoint", map[string]string{"GUARD_OTEL": "false", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, false, ""},
		{"sdk disabled wins", map[string]string{"GUARD_OTEL": "true", "OTEL_SDK_DISABLED": "true"}, false, ""},
		{"grpc", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, true, ""},
		{"http/json with export on", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, false, "must be http/protobuf or grpc"},
		{"traces protocol wins", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, true, ""},
		{"http/json with export off is no concern", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, false, ""},
		{"malformed endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, false, "OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL"},
		{"credentials in the endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://user:secret@collector:4318"}, false, "must be a URL without credentials"},
		{"malformed switch", map[string]string{"GUARD_OTEL": "maybe"}, false, "GUARD_OTEL must be a boolean"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := LoadConfig(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				for _, v := range tc.env {
					if len(v) > 6 && strings.Contains(err.Error(), v) {
						t.Fatalf("the error repeats the value %q", v)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.OTel.Enabled() != tc.on {
				t.Fatalf("enabled %v, want %v", c.OTel.Enabled(), tc.on)
			}
		})
	}
}
