package observability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	guard "github.com/guardrail-control/guard"
)

// Limits of one posted event beyond the field lengths of post_events.go, so that what a client sends
// costs a bounded amount of memory in the buffer and of work in the database, and so that every number
// that goes into a sum or an average keeps the sums finite. See docs/limits.md.
const (
	// MaxMetadataBytes bounds an event's metadata as sent (its JSON text, whitespace included).
	MaxMetadataBytes = 16 << 10
	// MaxMetadataDepth bounds the nesting of objects and arrays in metadata (the metadata object is
	// level 1).
	MaxMetadataDepth = 32
	// MaxMetadataElements bounds the values metadata holds: every object member and every array element,
	// at any depth, counts once. Without it 16 KiB of `[{},{},...]` would cost ~100 times its size in
	// decoded maps.
	MaxMetadataElements = 1024
	// MaxDurationMS bounds execution_duration_ms: one day. Durations are summed for averages; a bound
	// keeps the sums of any number of events finite.
	MaxDurationMS = guard.MaxEventDurationMS
	// MaxErrorMessageBytes bounds error_message: longer is a 422. Messages between maxErrorMessage (8 KiB)
	// and this are truncated to 8 KiB, as before, so that one long evaluator error does not cost a
	// client its whole batch.
	MaxErrorMessageBytes = 64 << 10
)

// checkMetadata validates the metadata of one event and decodes it. raw is the JSON text as sent (nil
// or "null" when absent). It never decodes text that breaks a limit: the limits are checked on the
// bytes first, in one linear pass.
func checkMetadata(raw json.RawMessage, at string) (map[string]any, []guard.Problem) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	field := at + ".metadata"
	fail := func(code, msg string) (map[string]any, []guard.Problem) {
		return nil, []guard.Problem{{Field: field, Code: code, Message: msg}}
	}
	if raw[0] != '{' {
		return fail("type", "must be an object")
	}
	if len(raw) > MaxMetadataBytes {
		return fail("max_size", fmt.Sprintf("must be at most %d bytes of JSON", MaxMetadataBytes))
	}
	depth, elements := jsonShape(raw)
	if depth > MaxMetadataDepth {
		return fail(guard.CodeMaxDepth, fmt.Sprintf("must not nest objects and arrays deeper than %d levels", MaxMetadataDepth))
	}
	if elements > MaxMetadataElements {
		return fail("max_elements", fmt.Sprintf("must hold at most %d values (object members and array elements, at any depth)", MaxMetadataElements))
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return fail("invalid", "must be a JSON object")
	}
	return m, nil
}

// jsonShape returns the deepest nesting of objects and arrays in raw and how many values they hold
// (members and elements at any depth). It counts brackets, commas and first values outside strings, so
// it is linear, never recurses and allocates nothing; raw is JSON the decoder already accepted.
func jsonShape(raw []byte) (maxDepth, elements int) {
	depth := 0
	inString, escaped, opened := false, false, false
	for _, c := range raw {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		if opened && c != '}' && c != ']' {
			elements++ // the first value of a non-empty container
		}
		opened = false
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			maxDepth = max(maxDepth, depth)
			opened = true
		case '}', ']':
			depth--
		case ',':
			elements++
		}
	}
	return maxDepth, elements
}

// checkNumbers validates the numbers of an event that go into sums and averages and sets them on ev.
// JSON cannot carry NaN or infinities, but Go callers of the recorder can: the checks say "finite" too.
func (in *eventWire) checkNumbers(ev *guard.Event, at string) []guard.Problem {
	var ps []guard.Problem
	if c := in.Confidence; math.IsNaN(c) || c < 0 || c > 1 {
		ps = append(ps, guard.Problem{Field: at + ".confidence", Code: "range", Message: "must be between 0 and 1"})
	} else {
		ev.Confidence = c
	}
	if d := in.ExecutionDurationMS; d != nil {
		if math.IsNaN(*d) || *d < 0 || *d > MaxDurationMS {
			ps = append(ps, guard.Problem{Field: at + ".execution_duration_ms", Code: "range",
				Message: fmt.Sprintf("must be a number of milliseconds from 0 to %d (one day)", MaxDurationMS)})
		} else {
			ev.ExecutionDurationMS = d // decoded for this event alone
		}
	}
	return ps
}

// checkErrorMessage bounds error_message: past MaxErrorMessageBytes a problem, past maxErrorMessage a
// copy truncated to it (a copy, so that the buffer does not keep the long original alive).
func checkErrorMessage(msg string, ev *guard.Event, at string) []guard.Problem {
	switch {
	case len(msg) > MaxErrorMessageBytes:
		return []guard.Problem{{Field: at + ".error_message", Code: "max_length",
			Message: fmt.Sprintf("must be at most %d bytes long", MaxErrorMessageBytes)}}
	case len(msg) > maxErrorMessage:
		ev.ErrorMessage = strings.Clone(truncateUTF8(msg, maxErrorMessage))
	default:
		ev.ErrorMessage = msg
	}
	return nil
}
