package toxicity

import (
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
			if d := retryPolicy(c.s).Backoff(tt.attempt); d < tt.full/2 || d > tt.full {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", tt.attempt, d, tt.full/2, tt.full)
			}
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
