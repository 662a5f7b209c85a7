package main

import (
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadConfigDefaults(t *testing.T) {
	c, err := LoadConfig(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.DatabaseURL != "guard.db" || c.Host != "0.0.0.0" || c.Port != 8000 || c.Debug || c.AuthEnabled ||
		!c.ObservabilityEnabled || c.FlushInterval != 10*time.Second || c.RetentionDays != 30 || c.MetricsPrefix != "guard" {
		t.Fatalf("defaults: %+v", c)
	}
	if c.Addr() != "0.0.0.0:8000" {
		t.Fatalf("addr %q", c.Addr())
	}
}

func TestLoadConfigValues(t *testing.T) {
	c, err := LoadConfig(env(map[string]string{
		"DATABASE_URL": "postgres://x/y", "DB_URL": "other.db", "HOST": "127.0.0.1", "PORT": "0", "DEBUG": "true",
		"GUARD_API_KEY_ENABLED": "TRUE", "GUARD_API_KEYS": "a, b,,", "GUARD_ADMIN_API_KEYS": "c",
		"OBSERVABILITY_ENABLED": "false", "OBSERVABILITY_FLUSH_INTERVAL_SECONDS": "0.5",
		"OBSERVABILITY_RETENTION_DAYS": "7", "PROMETHEUS_METRICS_PREFIX": "acme",
		"GUARD_ALLOWED_ORIGINS": " http://localhost:5173 ,, https://guard.example.com",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.DatabaseURL != "postgres://x/y" || c.Port != 0 || !c.Debug || !c.AuthEnabled || c.ObservabilityEnabled ||
		c.FlushInterval != 500*time.Millisecond || c.RetentionDays != 7 || c.MetricsPrefix != "acme" ||
		strings.Join(c.APIKeys, "|") != "a|b" || strings.Join(c.AdminAPIKeys, "|") != "c" ||
		strings.Join(c.AllowedOrigins, "|") != "http://localhost:5173|https://guard.example.com" {
		t.Fatalf("values: %+v", c)
	}
	c, err = LoadConfig(env(map[string]string{"DB_URL": "sqlite:///tmp/x.db", "HOST": "::1", "PORT": "9"}))
	if err != nil || c.DatabaseURL != "sqlite:///tmp/x.db" || c.Addr() != "[::1]:9" {
		t.Fatalf("DB_URL: %+v %v", c, err)
	}
}

func TestLoadConfigMalformed(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		name string
	}{
		{map[string]string{"PORT": "eighty"}, "PORT"},
		{map[string]string{"PORT": "70000"}, "PORT"},
		{map[string]string{"PORT": "-1"}, "PORT"},
		{map[string]string{"DEBUG": "maybe"}, "DEBUG"},
		{map[string]string{"GUARD_API_KEY_ENABLED": "yes please"}, "GUARD_API_KEY_ENABLED"},
		{map[string]string{"OBSERVABILITY_ENABLED": "2"}, "OBSERVABILITY_ENABLED"},
		{map[string]string{"OBSERVABILITY_FLUSH_INTERVAL_SECONDS": "0"}, "OBSERVABILITY_FLUSH_INTERVAL_SECONDS"},
		{map[string]string{"OBSERVABILITY_FLUSH_INTERVAL_SECONDS": "ten"}, "OBSERVABILITY_FLUSH_INTERVAL_SECONDS"},
		{map[string]string{"OBSERVABILITY_RETENTION_DAYS": "1.5"}, "OBSERVABILITY_RETENTION_DAYS"},
		{map[string]string{"GUARD_API_KEY_ENABLED": "true"}, "GUARD_API_KEYS"},
		{map[string]string{"DB_URL": "mysql://secret-host/db"}, "DB_URL"},
		{map[string]string{"DATABASE_URL": "redis://secret-host"}, "DATABASE_URL"},
		{map[string]string{"EXT_API_KEY": "k", "EXT_API_URL": "ftp://secret-host/x"}, "EXT_API_URL"},
	} {
		_, err := LoadConfig(env(tc.env))
		if err == nil || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("%v: error %v does not name %s", tc.env, err, tc.name)
		}
		for _, v := range tc.env {
			if len(v) >= 3 && v != "true" && (strings.Contains(err.Error(), v) || strings.Contains(err.Error(), "secret-host")) {
				t.Errorf("%v: error %q echoes the value", tc.env, err)
			}
		}
	}
}
