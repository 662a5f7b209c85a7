package toxicity

import (
	"net/http"
	"testing"
	"time"
)

func TestBackoffGrowsWithJitterAndCap(t *testing.T) {
	c := client{s: Settings{Backoff: 100 * time.Millisecond}.withDefaults()}
	tests := []struct {
		attempt int
		full    time.Duration
	}{{1, 100 * time.Millisecond}, {2, 200 * time.Millisecond}, {3, 400 * time.Millisecond}, {20, MaxBackoff}}
	for _, tt := range tests {
		for range 50 {
			if d := c.retryPolicy().Backoff(tt.attempt); d < tt.full/2 || d > tt.full {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", tt.attempt, d, tt.full/2, tt.full)
			}
		}
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

func TestSettingsDefaults(t *testing.T) {
	s := Settings{APIKey: " k ", MaxRetries: -1}.withDefaults()
	if s.APIKey != "k" || s.URL != DefaultURL || s.MaxRetries != 0 || s.Backoff != DefaultBackoff || s.HTTPClient == nil {
		t.Fatalf("withDefaults = %+v", s)
	}
	if d := (Settings{}).withDefaults(); d.MaxRetries != DefaultMaxRetries {
		t.Fatalf("MaxRetries default = %d", d.MaxRetries)
	}
}
