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
	if c.DatabaseURL != "guard.db" || c.Host != "127.0.0.1" || c.Port != 8000 || c.Debug || c.AuthEnabled ||
		!c.ObservabilityEnabled || c.FlushInterval != 10*time.Second || c.RetentionDays != 30 || c.MetricsPrefix != "guard" ||
		!c.AccessLog || c.Pprof || c.HostExplicit {
		t.Fatalf("defaults: %+v", c)
	}
	if c.Addr() != "127.0.0.1:8000" || c.ExposedWithoutAuth() {
		t.Fatalf("addr %q, exposed %v", c.Addr(), c.ExposedWithoutAuth())
	}
}

// TestDefaultHost: loopback by default while authentication is off, every interface when it is on; an
// explicit HOST wins, and only a non-loopback HOST with authentication off counts as exposed (the warning).
func TestDefaultHost(t *testing.T) {
	for _, tc := range []struct {
		env     map[string]string
		host    string
		exposed bool
	}{
		{nil, "127.0.0.1", false},
		{map[string]string{"GUARD_API_KEY_ENABLED": "true", "GUARD_API_KEYS": "k"}, "0.0.0.0", false},
		{map[string]string{"HOST": "0.0.0.0"}, "0.0.0.0", true},
		{map[string]string{"HOST": "192.0.2.7"}, "192.0.2.7", true},
		{map[string]string{"HOST": "::"}, "::", true},
		{map[string]string{"HOST": "localhost"}, "localhost", false},
		{map[string]string{"HOST": "::1"}, "::1", false},
		{map[string]string{"HOST": "127.0.0.2"}, "127.0.0.2", false},
		{map[string]string{"HOST": "0.0.0.0", "GUARD_API_KEY_ENABLED": "true", "GUARD_ADMIN_API_KEYS": "k"}, "0.0.0.0", false},
	} {
		c, err := LoadConfig(env(tc.env))
		if err != nil {
			t.Fatal(err)
		}
		if c.Host != tc.host || c.ExposedWithoutAuth() != tc.exposed {
			t.Errorf("%v: host %q exposed %v, want %q %v", tc.env, c.Host, c.ExposedWithoutAuth(), tc.host, tc.exposed)
		}
	}
}

// TestEnvTable: every row has a name, a description and a default that parses; names are unique.
func TestEnvTable(t *testing.T) {
	seen := map[string]bool{}
	for _, ev := range envVars {
		for _, n := range append([]string{ev.name}, ev.aliases...) {
			if seen[n] {
				t.Errorf("%s declared twice", n)
			}
			seen[n] = true
		}
		if ev.desc == "" || ev.set == nil {
			t.Errorf("%s: no description or parser", ev.name)
		}
		if ev.def != "" {
			var c Config
			if want := ev.set(&c, ev.def); want != "" {
				t.Errorf("%s: the default %q does not parse: must be %s", ev.name, ev.def, want)
			}
		}
	}
}

func TestLoadConfigValues(t *testing.T) {
	c, err := LoadConfig(env(map[string]string{
		"DATABASE_URL": "postgres://x/y", "DB_URL": "other.db", "HOST": "127.0.0.1", "PORT": "0", "DEBUG": "true",
		"GUARD_API_KEY_ENABLED": "TRUE", "GUARD_API_KEYS": "a, b,,", "GUARD_ADMIN_API_KEYS": "c",
		"OBSERVABILITY_ENABLED": "false", "OBSERVABILITY_FLUSH_INTERVAL_SECONDS": "0.5",
		"OBSERVABILITY_RETENTION_DAYS": "7", "PROMETHEUS_METRICS_PREFIX": "acme",
		"GUARD_ALLOWED_ORIGINS": " http://localhost:5173 ,, https://guard.example.com",
		"GUARD_ACCESS_LOG":      "off", "GUARD_PPROF": "on",
		"OBSERVABILITY_DURABLE": "true", "OBSERVABILITY_BUFFER_BYTES": "2097152",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.DatabaseURL != "postgres://x/y" || c.Port != 0 || !c.Debug || !c.AuthEnabled || c.ObservabilityEnabled ||
		c.FlushInterval != 500*time.Millisecond || c.RetentionDays != 7 || c.MetricsPrefix != "acme" ||
		strings.Join(c.APIKeys, "|") != "a|b" || strings.Join(c.AdminAPIKeys, "|") != "c" ||
		strings.Join(c.AllowedOrigins, "|") != "http://localhost:5173|https://guard.example.com" ||
		c.AccessLog || !c.Pprof || c.Host != "127.0.0.1" || !c.HostExplicit ||
		!c.ObservabilityDurable || c.BufferBytes != 2<<20 {
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
		{map[string]string{"GUARD_ACCESS_LOG": "sometimes"}, "GUARD_ACCESS_LOG"},
		{map[string]string{"GUARD_PPROF": "2"}, "GUARD_PPROF"},
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
