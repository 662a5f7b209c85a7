package toxicity

import (
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/guardrail-control/guard/evaluator/internal/extcall"
)

// Environment variables read by SettingsFromEnv.
const (
	// EnvAPIKey holds the bearer token of the moderation service. Without it ext.toxicity is unavailable.
	EnvAPIKey = "EXT_API_KEY"
	// EnvAPIURL overrides DefaultURL (any OpenAI-compatible moderation endpoint).
	EnvAPIURL = "EXT_API_URL"
	// EnvAPIModel, when set, is sent as the "model" field of each request; otherwise the field is omitted
	// and the service picks its default model.
	EnvAPIModel = "EXT_API_MODEL"
)

// DefaultURL is the moderation endpoint used when Settings.URL and EXT_API_URL are empty.
const DefaultURL = "https://api.openai.com/v1/moderations"

// Defaults of the retry policy and of the response size limit.
const (
	DefaultMaxRetries = 3
	DefaultBackoff    = 200 * time.Millisecond
	// MaxBackoff caps one computed backoff delay (before jitter).
	MaxBackoff = 5 * time.Second
	// MaxResponseBytes bounds the response body read from the service; a larger body is an error.
	MaxResponseBytes = 1 << 20
)

// Settings say how ext.toxicity reaches its moderation service. The zero value of every field but
// APIKey means "use the default".
type Settings struct {
	// APIKey is sent as "Authorization: Bearer <APIKey>". It never appears in errors or schemas.
	// An empty key makes the evaluator unavailable.
	APIKey string
	// URL of the moderation endpoint; default DefaultURL.
	URL string
	// Model, when not empty, is sent as the request's "model" field.
	Model string
	// HTTPClient sends the requests; default a shared client that does not follow redirects (a redirect
	// would be answered as an unexpected status). Its own Timeout, if any, still applies.
	HTTPClient *http.Client
	// MaxRetries is how many times a request is retried after a 429, a 5xx or a network error, never
	// past the evaluation deadline. 0 means DefaultMaxRetries; a negative value disables retries.
	MaxRetries int
	// Backoff is the base delay before the first retry; it doubles on each retry up to MaxBackoff and
	// is jittered (a random delay between half and all of it). 0 means DefaultBackoff.
	Backoff time.Duration
}

// SettingsFromEnv reads EXT_API_KEY, EXT_API_URL and EXT_API_MODEL (surrounding blanks trimmed).
func SettingsFromEnv() Settings {
	return Settings{
		APIKey: strings.TrimSpace(os.Getenv(EnvAPIKey)),
		URL:    strings.TrimSpace(os.Getenv(EnvAPIURL)),
		Model:  strings.TrimSpace(os.Getenv(EnvAPIModel)),
	}
}

// configured holds the settings given to Configure; unset means "read the environment".
var configured extcall.Override[Settings]

// Configure replaces, for the evaluator registered in evaluator.Default, the settings otherwise read
// from the environment at each availability check and build. Configure(nil) goes back to the
// environment. Evaluators already built keep the settings they were built with. Programs that load the
// key from a secret store call it once at start; tests should prefer NewFactory with their own registry.
func Configure(s *Settings) { configured.Set(s) }

// currentSettings returns the Configure'd settings, or the environment's.
func currentSettings() Settings { return configured.Get(SettingsFromEnv) }

// Check reports a malformed setting, naming the variable (EXT_API_URL) but not its value. Settings without
// an API key leave the evaluator off and always pass. A server can call SettingsFromEnv().Check() at start
// so that a malformed EXT_API_URL stops it there rather than surfacing as a 422 on every control that
// uses ext.toxicity.
func (s Settings) Check() error {
	s = s.withDefaults()
	if s.APIKey == "" {
		return nil
	}
	return extcall.CheckURL(s.URL, EnvAPIURL)
}

// withDefaults fills the zero fields of s.
func (s Settings) withDefaults() Settings {
	s.APIKey = strings.TrimSpace(s.APIKey)
	if s.URL == "" {
		s.URL = DefaultURL
	}
	if s.HTTPClient == nil {
		s.HTTPClient = extcall.DefaultClient
	}
	s.MaxRetries = extcall.RetryCount(s.MaxRetries, DefaultMaxRetries)
	if s.Backoff <= 0 {
		s.Backoff = DefaultBackoff
	}
	return s
}
