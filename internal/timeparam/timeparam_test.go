package timeparam

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		code string // "" when accepted
	}{
		{"2026-11-27T10:00:00Z", ""},
		{"2026-11-27T10:00:00.123456789Z", ""},
		{"2026-11-27T10:00:00+14:00", ""},
		{"2026-11-27T10:00:00-14:00", ""},
		{"2026-11-27T10:00:00+05:45", ""},
		{"2026-11-27T10:00:00+14:01", "range"},
		{"2026-11-27T10:00:00-14:01", "range"},
		{"2026-11-27T10:00:00+24:00", "range"},
		{"2026-11-27T10:00:00-99:59", "range"},
		{"2026-11-27 10:00:00Z", "format"},
		{"yesterday", "format"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		code := ""
		if err != nil {
			code, _ = Problem(err)
		}
		if code != tt.code {
			t.Errorf("%s: code %q (%v), want %q", tt.in, code, err, tt.code)
		}
	}
}

// TestCheckOffsetAfterJSON: a time.Time field decoded by encoding/json keeps its offset, which
// CheckOffset judges.
func TestCheckOffsetAfterJSON(t *testing.T) {
	var v struct{ T time.Time }
	if err := json.Unmarshal([]byte(`{"T":"2026-11-27T10:00:00+24:00"}`), &v); err != nil {
		t.Fatal(err)
	}
	if err := CheckOffset(v.T); !errors.Is(err, ErrOffset) {
		t.Fatalf("err %v", err)
	}
	if err := CheckOffset(v.T.UTC()); err != nil {
		t.Fatalf("UTC: %v", err)
	}
}
