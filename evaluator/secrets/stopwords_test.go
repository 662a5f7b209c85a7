package secrets

import (
	"fmt"
	"testing"
)

// TestStopSet: the Aho-Corasick path of a long list answers as the word-by-word path of a short one.
func TestStopSet(t *testing.T) {
	var long []string
	for i := 0; i < acMinWords+8; i++ {
		long = append(long, fmt.Sprintf("word%02d", i))
	}
	long = append(long, "Example")
	big := newStopSet(long)
	if big.ac == nil {
		t.Fatal("a long list has no automaton")
	}
	small := newStopSet([]string{"word07", "example"})
	for _, tt := range []struct {
		secret string
		want   bool
	}{
		{"abcWORD07xyz", true},
		{"myEXAMPLEkey", true},
		{"Zq8vN3xR7tL2mK9pW4sY6bH1", false},
		{"", false},
	} {
		if got := big.in(tt.secret); got != tt.want {
			t.Errorf("long list: in(%q) = %v, want %v", tt.secret, got, tt.want)
		}
		if got := small.in(tt.secret); got != tt.want {
			t.Errorf("short list: in(%q) = %v, want %v", tt.secret, got, tt.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { big.in("Zq8vN3xR7tL2mK9pW4sY6bH1") }); n != 0 {
		t.Errorf("in allocates %v times", n)
	}
}
