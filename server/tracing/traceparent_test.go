package tracing

import "testing"

func TestParseTraceparent(t *testing.T) {
	const tid, sid = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	for _, tc := range []struct {
		name, v string
		ok      bool
	}{
		{"sampled", "00-" + tid + "-" + sid + "-01", true},
		{"not sampled", "00-" + tid + "-" + sid + "-00", true},
		{"future version with more fields", "01-" + tid + "-" + sid + "-01-extra", true},
		{"future version, exact length", "cc-" + tid + "-" + sid + "-01", true},
		{"version 00 with more fields", "00-" + tid + "-" + sid + "-01-extra", false},
		{"future version, no dash after flags", "01-" + tid + "-" + sid + "-01x", false},
		{"version ff", "ff-" + tid + "-" + sid + "-01", false},
		{"upper case", "00-4BF92F3577B34DA6A3CE929D0E0E4736-" + sid + "-01", false},
		{"zero trace id", "00-00000000000000000000000000000000-" + sid + "-01", false},
		{"zero span id", "00-" + tid + "-0000000000000000-01", false},
		{"short", "00-" + tid + "-" + sid, false},
		{"bad flags", "00-" + tid + "-" + sid + "-0g", false},
		{"wrong separators", "00_" + tid + "_" + sid + "_01", false},
		{"empty", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gotT, gotS, ok := ParseTraceparent(tc.v)
			if ok != tc.ok {
				t.Fatalf("ok = %v", ok)
			}
			if ok && (gotT != tid || gotS != sid) {
				t.Fatalf("ids %q %q", gotT, gotS)
			}
			if !ok && (gotT != "" || gotS != "") {
				t.Fatalf("ids returned for an invalid value")
			}
		})
	}
}

func TestValidIDs(t *testing.T) {
	for _, tc := range []struct {
		v           string
		trace, span bool
	}{
		{"4bf92f3577b34da6a3ce929d0e0e4736", true, false},
		{"00f067aa0ba902b7", false, true},
		{"00000000000000000000000000000000", false, false},
		{"0000000000000000", false, false},
		{"trace-1", false, false},
		{"00F067AA0BA902B7", false, false},
	} {
		if ValidTraceID(tc.v) != tc.trace || ValidSpanID(tc.v) != tc.span {
			t.Errorf("%q: trace %v span %v", tc.v, ValidTraceID(tc.v), ValidSpanID(tc.v))
		}
	}
}

// TestParseTraceparentDoesNotAllocate: the ids are substrings of the header, so reading the trace context
// of an evaluation's events costs no allocation (docs/tracing.md, "Cost").
func TestParseTraceparentDoesNotAllocate(t *testing.T) {
	const v = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	var ok bool
	if n := testing.AllocsPerRun(100, func() { _, _, ok = ParseTraceparent(v) }); n != 0 || !ok {
		t.Fatalf("%v allocations per parse (ok %v), want 0", n, ok)
	}
}
