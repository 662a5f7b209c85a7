package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/evaluator/toxicity"
)

// Config is the service configuration read from the environment (contract section 7).
type Config struct {
	DatabaseURL          string
	Host                 string
	Port                 int
	Debug                bool
	AuthEnabled          bool
	APIKeys              []string
	AdminAPIKeys         []string
	ObservabilityEnabled bool
	FlushInterval        time.Duration
	RetentionDays        int
	MetricsPrefix        string
	// EvaluationTimeout is the deadline of one POST /evaluation (EVALUATION_TIMEOUT_MS).
	EvaluationTimeout time.Duration
}

// maxEvaluationTimeout keeps the evaluation deadline below the HTTP server's write timeout (60 s, see
// serve), with time left to write the answer: past the write timeout the client gets no answer at all.
const maxEvaluationTimeout = 55 * time.Second

// Addr is the listen address host:port.
func (c Config) Addr() string { return joinHostPort(c.Host, c.Port) }

func joinHostPort(host string, port int) string {
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(port)
}

// LoadConfig reads the configuration through getenv (os.Getenv in main, a map in tests). A malformed
// value is an error naming the variable; the value itself is not repeated (it may be a secret).
func LoadConfig(getenv func(string) string) (Config, error) {
	c := Config{
		DatabaseURL:          "guard.db",
		Host:                 "0.0.0.0",
		Port:                 8000,
		ObservabilityEnabled: true,
		FlushInterval:        10 * time.Second,
		RetentionDays:        30,
		MetricsPrefix:        "guard",
		EvaluationTimeout:    guard.DefaultEvaluationTimeout,
	}
	var errs []string
	fail := func(name, want string) { errs = append(errs, fmt.Sprintf("%s must be %s", name, want)) }

	if v := strings.TrimSpace(getenv("DATABASE_URL")); v != "" {
		c.DatabaseURL = v
		if !supportedDatabaseURL(v) {
			fail("DATABASE_URL", databaseURLForms)
		}
	} else if v := strings.TrimSpace(getenv("DB_URL")); v != "" {
		c.DatabaseURL = v
		if !supportedDatabaseURL(v) {
			fail("DB_URL", databaseURLForms)
		}
	}
	if v := strings.TrimSpace(getenv("HOST")); v != "" {
		c.Host = v
	}
	if v := strings.TrimSpace(getenv("PORT")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 65535 {
			fail("PORT", "a port number from 0 to 65535 (0 picks a free port)")
		} else {
			c.Port = n
		}
	}
	boolVar := func(name string, dst *bool) {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return
		}
		b, err := parseBool(v)
		if err != nil {
			fail(name, "a boolean (true or false)")
			return
		}
		*dst = b
	}
	boolVar("DEBUG", &c.Debug)
	boolVar("GUARD_API_KEY_ENABLED", &c.AuthEnabled)
	boolVar("OBSERVABILITY_ENABLED", &c.ObservabilityEnabled)
	c.APIKeys = splitList(getenv("GUARD_API_KEYS"))
	c.AdminAPIKeys = splitList(getenv("GUARD_ADMIN_API_KEYS"))
	if v := strings.TrimSpace(getenv("OBSERVABILITY_FLUSH_INTERVAL_SECONDS")); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || f > 3600 {
			fail("OBSERVABILITY_FLUSH_INTERVAL_SECONDS", "a number of seconds greater than 0 and at most 3600")
		} else {
			c.FlushInterval = time.Duration(f * float64(time.Second))
		}
	}
	if v := strings.TrimSpace(getenv("OBSERVABILITY_RETENTION_DAYS")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 36500 {
			fail("OBSERVABILITY_RETENTION_DAYS", "a whole number of days from 1 to 36500")
		} else {
			c.RetentionDays = n
		}
	}
	if v := strings.TrimSpace(getenv("EVALUATION_TIMEOUT_MS")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || time.Duration(n)*time.Millisecond > maxEvaluationTimeout {
			fail("EVALUATION_TIMEOUT_MS", fmt.Sprintf("a whole number of milliseconds from 1 to %d (below the HTTP write timeout)", maxEvaluationTimeout.Milliseconds()))
		} else {
			c.EvaluationTimeout = time.Duration(n) * time.Millisecond
		}
	}
	if v := strings.TrimSpace(getenv("PROMETHEUS_METRICS_PREFIX")); v != "" {
		c.MetricsPrefix = v
	}
	ext := toxicity.Settings{APIKey: strings.TrimSpace(getenv(toxicity.EnvAPIKey)), URL: strings.TrimSpace(getenv(toxicity.EnvAPIURL))}
	if err := ext.Check(); err != nil {
		errs = append(errs, err.Error())
	}
	if c.AuthEnabled && len(c.APIKeys) == 0 && len(c.AdminAPIKeys) == 0 {
		errs = append(errs, "GUARD_API_KEY_ENABLED is true but neither GUARD_API_KEYS nor GUARD_ADMIN_API_KEYS holds a key")
	}
	if len(errs) > 0 {
		return c, fmt.Errorf("invalid configuration: %s", strings.Join(errs, "; "))
	}
	return c, nil
}

const databaseURLForms = "a postgres://, postgresql:// or sqlite:// URL, a file: URI or a file path"

// supportedDatabaseURL reports whether v has a form the store can open: a URL with a scheme it knows, or a
// path (no scheme). The store checks the rest when it opens the database.
func supportedDatabaseURL(v string) bool {
	scheme, _, hasScheme := strings.Cut(v, "://")
	if !hasScheme {
		return true // a bare path or a file: URI
	}
	switch strings.ToLower(scheme) {
	case "postgres", "postgresql", "sqlite":
		return true
	}
	return false
}

// parseBool accepts true/false, 1/0, yes/no and on/off, in any case.
func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true", "1", "yes", "on":
		return true, nil
	case "false", "0", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("not a boolean")
}

// splitList splits a comma-separated list, dropping blanks.
func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
