package toxicity

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
)

func names(fs []*evaluator.Factory) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

func TestUnavailableWithoutKey(t *testing.T) {
	r := evaluator.NewRegistry()
	r.Register(NewFactory(Settings{APIKey: "  "}))
	if got := names(r.List()); slices.Contains(got, Name) {
		t.Fatalf("List() = %v, want no %s", got, Name)
	}
	if _, err := r.Build(Name, cfg("gt", 0.5)); !errors.Is(err, evaluator.ErrUnknownEvaluator) {
		t.Fatalf("Build err = %v, want ErrUnknownEvaluator", err)
	}
}

// TestDefaultRegistry checks the init() registration, which follows EXT_API_KEY at call time.
func TestDefaultRegistry(t *testing.T) {
	t.Setenv(EnvAPIKey, "")
	if got := names(evaluator.Default.List()); slices.Contains(got, Name) {
		t.Fatalf("without a key List() = %v", got)
	}
	if _, err := evaluator.Default.Build(Name, cfg("gt", 0.5)); !errors.Is(err, evaluator.ErrUnknownEvaluator) {
		t.Fatalf("without a key Build err = %v", err)
	}

	t.Setenv(EnvAPIKey, testKey)
	var f *evaluator.Factory
	for _, x := range evaluator.Default.List() {
		if x.Name == Name {
			f = x
		}
	}
	if f == nil {
		t.Fatalf("with a key List() = %v, want %s", names(evaluator.Default.List()), Name)
	}
	if !f.RequiresAPIKey || !f.External || f.Version == "" || f.Description == "" {
		t.Errorf("factory = %+v", f)
	}
	listed, _ := json.Marshal(f.SchemaJSON())
	if strings.Contains(string(listed), testKey) || strings.Contains(f.Description, testKey) {
		t.Fatal("the key shows in the listing")
	}
	if _, err := evaluator.Default.Build(Name, cfg("gt", 0.5)); err != nil {
		t.Fatalf("with a key Build: %v", err)
	}

	Configure(&Settings{})
	defer Configure(nil)
	if _, ok := evaluator.Default.Lookup(Name); ok {
		t.Fatal("Configure with no key must override the environment")
	}
}

func TestConfigErrors(t *testing.T) {
	r := evaluator.NewRegistry()
	r.Register(NewFactory(Settings{APIKey: testKey, URL: "http://127.0.0.1:1"}))
	tests := []struct {
		name   string
		config map[string]any
		fields []string
	}{
		{"empty", map[string]any{}, []string{"metric", "operator", "target_value"}},
		{"bad enums", map[string]any{"metric": "toxicity", "operator": ">", "target_value": 0.5}, []string{"metric", "operator"}},
		{"target above 1", map[string]any{"metric": "input_toxicity", "operator": "gt", "target_value": 1.5}, []string{"target_value"}},
		{"target not a number", map[string]any{"metric": "input_toxicity", "operator": "gt", "target_value": "0.5"}, []string{"target_value"}},
		{"unknown key", map[string]any{"metric": "input_toxicity", "operator": "gt", "target_value": 0.5, "api_key": "x"}, []string{"api_key"}},
		{"empty categories", map[string]any{"metric": "input_toxicity", "operator": "gt", "target_value": 0.5, "categories": []any{}}, []string{"categories"}},
		{"bad timeout", map[string]any{"metric": "input_toxicity", "operator": "gt", "target_value": 0.5, "timeout_ms": -1}, []string{"timeout_ms"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Build(Name, tt.config)
			var ce *evaluator.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want *ConfigError", err)
			}
			var got []string
			for _, p := range ce.Problems {
				got = append(got, p.Field)
			}
			for _, f := range tt.fields {
				if !slices.Contains(got, f) {
					t.Errorf("problems %v do not name %q", got, f)
				}
			}
		})
	}
	good := map[string]any{"metric": "output_toxicity", "operator": "lte", "target_value": 0, "on_error": "allow", "timeout_ms": 500}
	if b, err := r.Build(Name, good); err != nil || b.OnError != evaluator.OnErrorAllow {
		t.Fatalf("Build(good) = %+v, %v", b, err)
	}
}

func TestBadURLIsReportedWithoutIt(t *testing.T) {
	r := evaluator.NewRegistry()
	r.Register(NewFactory(Settings{APIKey: testKey, URL: "ftp://user:" + testKey + "@host/x"}))
	_, err := r.Build(Name, cfg("gt", 0.5))
	if err == nil || strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), EnvAPIURL) {
		t.Fatalf("err = %v", err)
	}
}

// TestSettingsCheck: a malformed URL is reported naming EXT_API_URL (never the URL, which may hold a
// secret); without a key the evaluator is off and nothing is checked.
func TestSettingsCheck(t *testing.T) {
	tests := []struct {
		name string
		s    Settings
		ok   bool
	}{
		{"no key, bad URL", Settings{URL: "notaurl"}, true},
		{"key, default URL", Settings{APIKey: testKey}, true},
		{"key, https URL", Settings{APIKey: testKey, URL: "https://mod.example/v1/moderations"}, true},
		{"key, http URL", Settings{APIKey: testKey, URL: "http://127.0.0.1:9/x"}, true},
		{"key, no scheme", Settings{APIKey: testKey, URL: "notaurl"}, false},
		{"key, ftp with secret", Settings{APIKey: testKey, URL: "ftp://user:" + testKey + "@host/x"}, false},
		{"key, no host", Settings{APIKey: testKey, URL: "https:///x"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.s.Check()
			if (err == nil) != tt.ok {
				t.Fatalf("Check() = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && (!strings.Contains(err.Error(), EnvAPIURL) || strings.Contains(err.Error(), testKey)) {
				t.Fatalf("Check() = %q: must name %s and not repeat the value", err, EnvAPIURL)
			}
		})
	}
}
