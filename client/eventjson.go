package client

import (
	"errors"
	"math"
	"strconv"
	"unicode/utf8"
)

// appendEventsJSON appends the body of POST /observability/events, {"events":[...]}, to b. It writes
// byte for byte what encoding/json writes for struct{ Events []wireEvent `json:"events"` } (same field
// order, omitempty/omitzero, string escaping with HTML escaping, float format), without reflection: the
// sender goroutine encodes every event, and encoding/json was the largest cost of observability. Like
// encoding/json it fails on a NaN or infinite number.
func appendEventsJSON(b []byte, evs []wireEvent) ([]byte, error) {
	b = append(b, `{"events":[`...)
	for i := range evs {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendEventJSON(b, &evs[i]); err != nil {
			return nil, err
		}
	}
	return append(b, "]}"...), nil
}

var errNonFinite = errors.New("guard client: encode event: unsupported number (NaN or infinity)")

func appendEventJSON(b []byte, e *wireEvent) ([]byte, error) {
	var err error
	b = append(b, `{"control_execution_id":`...)
	b = appendJSONString(b, e.ControlExecutionID)
	if e.TraceID != "" {
		b = append(b, `,"trace_id":`...)
		b = appendJSONString(b, e.TraceID)
	}
	if e.SpanID != "" {
		b = append(b, `,"span_id":`...)
		b = appendJSONString(b, e.SpanID)
	}
	b = append(b, `,"agent_name":`...)
	b = appendJSONString(b, e.AgentName)
	b = append(b, `,"control_id":`...)
	b = strconv.AppendInt(b, e.ControlID, 10)
	b = append(b, `,"control_name":`...)
	b = appendJSONString(b, e.ControlName)
	b = append(b, `,"check_stage":`...)
	b = appendJSONString(b, string(e.CheckStage))
	b = append(b, `,"step_type":`...)
	b = appendJSONString(b, e.StepType)
	b = append(b, `,"step_name":`...)
	b = appendJSONString(b, e.StepName)
	b = append(b, `,"action":`...)
	b = appendJSONString(b, string(e.Action))
	b = append(b, `,"matched":`...)
	b = strconv.AppendBool(b, e.Matched)
	b = append(b, `,"confidence":`...)
	if b, err = appendJSONFloat(b, e.Confidence); err != nil {
		return nil, err
	}
	b = append(b, `,"timestamp":`...)
	b = appendJSONString(b, e.Timestamp)
	if e.ExecutionDurationMS != 0 {
		b = append(b, `,"execution_duration_ms":`...)
		if b, err = appendJSONFloat(b, e.ExecutionDurationMS); err != nil {
			return nil, err
		}
	}
	if e.EvaluatorName != "" {
		b = append(b, `,"evaluator_name":`...)
		b = appendJSONString(b, e.EvaluatorName)
	}
	if e.SelectorPath != "" {
		b = append(b, `,"selector_path":`...)
		b = appendJSONString(b, e.SelectorPath)
	}
	if e.ErrorMessage != "" {
		b = append(b, `,"error_message":`...)
		b = appendJSONString(b, e.ErrorMessage)
	}
	b = append(b, `,"source":`...)
	b = appendJSONString(b, e.Source)
	if e.Metadata != (eventMeta{}) {
		b = append(b, `,"metadata":{`...)
		if e.Metadata.Policy != "" {
			b = append(b, `"policy":`...)
			b = appendJSONString(b, e.Metadata.Policy)
		}
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// appendJSONFloat formats f as encoding/json does for a float64.
func appendJSONFloat(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, errNonFinite
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 -> e-9, as encoding/json
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

// appendJSONString quotes s as encoding/json does with HTML escaping: <, > and & as \u00XX, control
// characters escaped, invalid UTF-8 replaced by \ufffd, U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	const hexd = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexd[c>>4], hexd[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexd[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
