package tracing

// Header names of the W3C Trace Context recommendation.
const (
	TraceparentHeader = "traceparent"
	TracestateHeader  = "tracestate"
)

// ParseTraceparent returns the trace id (32 lower-case hex digits) and the parent span id (16) of a W3C
// traceparent header value, and false when the value is not a valid traceparent: then the header is
// ignored, as the recommendation asks, never refused. The ids are substrings of v (no allocation).
//
// Version 00 must be exactly version-traceid-parentid-flags; a higher version may append fields after a
// dash (forward compatibility); version ff is invalid, as are all-zero ids and upper-case hex.
func ParseTraceparent(v string) (traceID, spanID string, ok bool) {
	const n = 55 // 2 + 1 + 32 + 1 + 16 + 1 + 2
	if len(v) < n || v[2] != '-' || v[35] != '-' || v[52] != '-' {
		return "", "", false
	}
	if !lowerHex(v[0:2]) || v[0:2] == "ff" || !lowerHex(v[53:55]) {
		return "", "", false
	}
	if len(v) > n && (v[0:2] == "00" || v[n] != '-') {
		return "", "", false
	}
	traceID, spanID = v[3:35], v[36:52]
	if !lowerHex(traceID) || !lowerHex(spanID) || allZero(traceID) || allZero(spanID) {
		return "", "", false
	}
	return traceID, spanID, true
}

// ValidTraceID reports whether s is a W3C trace id: 32 lower-case hex digits, not all zero.
func ValidTraceID(s string) bool { return len(s) == 32 && lowerHex(s) && !allZero(s) }

// ValidSpanID reports whether s is a W3C span id: 16 lower-case hex digits, not all zero.
func ValidSpanID(s string) bool { return len(s) == 16 && lowerHex(s) && !allZero(s) }

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func allZero(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '0' {
			return false
		}
	}
	return true
}
