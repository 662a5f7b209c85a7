package guard_test

import (
	"testing"

	"github.com/guardrail-control/guard"
)

// TestNormalizeAgentName: the alphabet is checked before case folding, and folding is ASCII only, so no
// compatibility character can become another spelling of an ASCII name.
func TestNormalizeAgentName(t *testing.T) {
	tests := []struct {
		in, want string // want "": refused
	}{
		{"k-agent", "k-agent"},
		{"K-Agent", "k-agent"},
		{"  Istanbul\t", "istanbul"},
		{"a.b_c:d-9", "a.b_c:d-9"},
		{"\u212a-agent", ""},  // Kelvin sign: lower-cases to "k" with Unicode rules
		{"\u0130stanbul", ""}, // İ: lower-cases to "i" + combining dot
		{"\uff4b-agent", ""},  // full-width k: NFKC makes it "k"
		{"k\u200b-agent", ""}, // zero-width space
		{"\u00a0k-agent", ""}, // no-break space is not trimmed
		{"k-agent\u0085", ""}, // neither is NEL
		{"stra\u00dfe", ""},   // ß
		{"caf\u00e9", ""},     // é
		{"-agent", ""},        // must start with a letter or digit
		{"a/b", ""},
		{"", ""},
		{"   ", ""},
	}
	for _, tt := range tests {
		got, err := guard.NormalizeAgentName(tt.in)
		if tt.want == "" {
			if err == nil {
				t.Errorf("%q accepted as %q", tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%q = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestNormalizeAgentNameFilter(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"", "", true},
		{" Agent ", "agent", true},
		{"-", "-", true},
		{"\u212a", "", false},
		{"\u0130", "", false},
		{"a b", "", false},
	}
	for _, tt := range tests {
		got, err := guard.NormalizeAgentNameFilter(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("%q = %q, %v", tt.in, got, err)
		}
	}
}
