package promptclassifier

import (
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/guardrail-control/guard/evaluator/internal/extcall"
)

// Environment variables read by SettingsFromEnv.
const (
	// EnvURL is the classifier's endpoint; without it ext.prompt_injection is unavailable.
	EnvURL = "EXT_PROMPT_CLASSIFIER_URL"
	// EnvAPIKey, when set, is sent as "Authorization: Bearer <key>".
	EnvAPIKey = "EXT_PROMPT_CLASSIFIER_API_KEY"
)

// Defaults of the retry policy and of the response size limit.
const (
	DefaultMaxRetries = 2
	DefaultBackoff    = 100 * time.Millisecond
	MaxBackoff        = 2 * time.Second
	MaxResponseBytes  = 1 << 20
)

// Settings say how ext.prompt_injection reaches the classifier.
type Settings struct {
	URL    string
	APIKey string // optional bearer token; never in errors
	// HTTPClient sends the requests; default a client that does not follow redirects.
	HTTPClient *http.Client
	// MaxRetries after a 429, a 5xx or a network error, never past the deadline: 0 means
	// DefaultMaxRetries, negative none.
	MaxRetries int
	// Backoff before the first retry, doubled per retry up to MaxBackoff; 0 means DefaultBackoff.
	Backoff time.Duration
}

// SettingsFromEnv reads EXT_PROMPT_CLASSIFIER_URL and EXT_PROMPT_CLASSIFIER_API_KEY.
func SettingsFromEnv() Settings {
	return Settings{URL: strings.TrimSpace(os.Getenv(EnvURL)), APIKey: strings.TrimSpace(os.Getenv(EnvAPIKey))}
}

var configured extcall.Override[Settings]

// Configure replaces, for the evaluator registered in evaluator.Default, the settings otherwise read from
// the environment; Configure(nil) goes back to the environment.
func Configure(s *Settings) { configured.Set(s) }

func currentSettings() Settings { return configured.Get(SettingsFromEnv) }

// Check reports a URL that is not http(s), naming the variable but not its value. Without a URL the
// evaluator is off and Check passes.
func (s Settings) Check() error {
	if strings.TrimSpace(s.URL) == "" {
		return nil
	}
	return extcall.CheckURL(s.URL, EnvURL)
}

func (s Settings) withDefaults() Settings {
	s.URL = strings.TrimSpace(s.URL)
	s.APIKey = strings.TrimSpace(s.APIKey)
	if s.HTTPClient == nil {
		s.HTTPClient = extcall.DefaultClient
	}
	s.MaxRetries = extcall.RetryCount(s.MaxRetries, DefaultMaxRetries)
	if s.Backoff <= 0 {
		s.Backoff = DefaultBackoff
	}
	return s
}
