package promptclassifier

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"
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

var configured atomic.Pointer[Settings]

// Configure replaces, for the evaluator registered in evaluator.Default, the settings otherwise read from
// the environment; Configure(nil) goes back to the environment.
func Configure(s *Settings) {
	if s == nil {
		configured.Store(nil)
		return
	}
	c := *s
	configured.Store(&c)
}

func currentSettings() Settings {
	if s := configured.Load(); s != nil {
		return *s
	}
	return SettingsFromEnv()
}

// Check reports a URL that is not http(s), naming the variable but not its value. Without a URL the
// evaluator is off and Check passes.
func (s Settings) Check() error {
	u := strings.TrimSpace(s.URL)
	if u == "" {
		return nil
	}
	if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return fmt.Errorf("%s must be an http(s) URL", EnvURL)
	}
	return nil
}

func (s Settings) withDefaults() Settings {
	s.URL = strings.TrimSpace(s.URL)
	s.APIKey = strings.TrimSpace(s.APIKey)
	if s.HTTPClient == nil {
		s.HTTPClient = defaultHTTPClient
	}
	switch {
	case s.MaxRetries == 0:
		s.MaxRetries = DefaultMaxRetries
	case s.MaxRetries < 0:
		s.MaxRetries = 0
	}
	if s.Backoff <= 0 {
		s.Backoff = DefaultBackoff
	}
	return s
}

// defaultHTTPClient does not follow redirects: the bearer token goes only to the configured URL.
var defaultHTTPClient = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}
