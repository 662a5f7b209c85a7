package extcall

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guardrail-control/guard/evaluator/internal/retry"
)

func service(url string) *Service {
	return &Service{Evaluator: "ext.test", What: "the test service", URL: url, APIKey: "sekret-key",
		URLVar: "TEST_URL", KeyVar: "TEST_KEY", UserAgent: "guard-test/1", Client: DefaultClient,
		Retry: retry.Policy{MaxRetries: 2, Base: time.Millisecond, Cap: time.Millisecond}, MaxAnswer: 128}
}

// TestPost: each kind of answer is sorted into success, a final error or a retried one, and no message
// repeats the key or the URL.
func TestPost(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		body     string
		header   string
		attempts int32
		want     string // "" for success
	}{
		{"ok", 200, `{"fine":true}`, "", 1, ""},
		{"malformed", 200, `nope`, "", 1, "ext.test: bad body"},
		{"unauthorized", 401, `{"error":{"code":"invalid_api_key"}}`, "", 1, "the test service rejected the request: 401 Unauthorized (invalid_api_key); check TEST_KEY"},
		{"key echoed in the code is not repeated", 403, `{"error":{"code":"sekret-key"}}`, "", 1, "403 Forbidden; check TEST_KEY"},
		{"5xx retried", 503, ``, "", 3, "the test service answered 503 Service Unavailable (after 3 attempts)"},
		{"429 with Retry-After retried", 429, ``, "0", 3, "429 Too Many Requests"},
		{"4xx final", 400, `{"error":{"type":"invalid_request_error","message":"echoes the input"}}`, "", 1, "400 Bad Request (invalid_request_error)"},
		{"too large", 200, strings.Repeat("x", 129), "", 1, "larger than 128 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n.Add(1)
				if r.Header.Get("Authorization") != "Bearer sekret-key" || r.Header.Get("User-Agent") != "guard-test/1" {
					t.Errorf("headers = %v", r.Header)
				}
				if tt.header != "" {
					w.Header().Set("Retry-After", tt.header)
				}
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			err := service(srv.URL).Post(context.Background(), []byte(`{}`), func(data []byte) string {
				if string(data) != `{"fine":true}` {
					return "bad body"
				}
				return ""
			})
			if got := n.Load(); got != tt.attempts {
				t.Errorf("attempts = %d, want %d", got, tt.attempts)
			}
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			case err != nil && (strings.Contains(err.Error(), "sekret-key") || strings.Contains(err.Error(), srv.URL)):
				t.Fatalf("err repeats a secret: %v", err)
			}
		})
	}
}

// TestPostDeadline: a service that never answers ends in a timeout error that unwraps to the context's.
func TestPostDeadline(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := service(srv.URL).Post(ctx, []byte(`{}`), func([]byte) string { return "" })
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no answer from the test service before the deadline") {
		t.Fatalf("err = %v", err)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		h    string
		want time.Duration
		ok   bool
	}{
		{"", 0, false}, {"0", 0, true}, {"3", 3 * time.Second, true}, {"-1", 0, false}, {"soon", 0, false},
		{"999999999", time.Hour, true},
		{now.Add(5 * time.Second).Format(http.TimeFormat), 5 * time.Second, true},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0, true},
	}
	for _, tt := range tests {
		if got, ok := retryAfter(tt.h, now); got != tt.want || ok != tt.ok {
			t.Errorf("retryAfter(%q) = %v, %v; want %v, %v", tt.h, got, ok, tt.want, tt.ok)
		}
	}
}

func TestSettingsHelpers(t *testing.T) {
	for _, bad := range []string{"", "ftp://x", "http://", "::"} {
		if err := CheckURL(bad, "X_URL"); err == nil || err.Error() != "X_URL must be an http(s) URL" {
			t.Errorf("CheckURL(%q) = %v", bad, err)
		}
	}
	if err := CheckURL(" https://user:pw@h/x ", "X_URL"); err != nil {
		t.Errorf("CheckURL = %v", err)
	}
	if RetryCount(0, 3) != 3 || RetryCount(-1, 3) != 0 || RetryCount(5, 3) != 5 {
		t.Error("RetryCount")
	}
	var o Override[string]
	env := func() string { return "env" }
	if o.Get(env) != "env" {
		t.Fatal("unset override")
	}
	v := "code"
	o.Set(&v)
	v = "changed"
	if o.Get(env) != "code" {
		t.Fatal("Set keeps a copy")
	}
	o.Set(nil)
	if o.Get(env) != "env" {
		t.Fatal("Set(nil)")
	}
}
