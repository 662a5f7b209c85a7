package observability

import (
	"unsafe"

	guard "github.com/guardrail-control/guard"
)

// The recorder's buffer is bounded in bytes (RecorderConfig.BufferBytes) by an estimate of the heap each
// event holds: the Event struct, its strings and its decoded metadata. Decoded JSON costs far more than
// its text (an empty object is a map of 48 bytes, a map with one member over 300), so the metadata is
// measured as the Go values it became, with the layout of Go's maps, slices and interfaces rounded up;
// a test checks the estimate against the heap really used (TestEventSizeCoversTheHeap).
const (
	eventBase     = int64(unsafe.Sizeof(guard.Event{})) + 8 // the struct and the boxed duration
	mapHeader     = 56                                      // 48, and a little slack
	mapGroup      = 8*(16+16) + 8                           // one group of 8 slots of string key and interface value, plus control word
	mapSlot       = 80                                      // per member past the first group: two 32-byte slots after growth, and control
	sliceHeader   = 24
	sliceSlot     = 16 // one interface per element of the backing array (its capacity)
	stringHeader  = 16
	boxedScalar   = 8
	maxSizeDepth  = 64 // Go callers could pass deeper (or cyclic) metadata: stop counting there
	allocRounding = 8
)

// eventSize estimates the heap bytes e holds once buffered.
func eventSize(e *guard.Event) int64 {
	n := eventBase + int64(len(e.ControlExecutionID)+len(e.TraceID)+len(e.SpanID)+len(e.AgentName)+
		len(e.ControlName)+len(e.StepType)+len(e.StepName)+len(e.EvaluatorName)+len(e.SelectorPath)+
		len(e.ErrorMessage)+len(e.Source)+len(e.CheckStage)+len(e.Action)+len(e.KeyName)+len(e.SessionID))
	if e.Metadata != nil {
		n += valueSize(e.Metadata, 0)
	}
	return n
}

// valueSize estimates the heap bytes of a decoded JSON value held in an interface.
func valueSize(v any, depth int) int64 {
	if depth > maxSizeDepth {
		return 0
	}
	switch x := v.(type) {
	case nil, bool:
		return 0 // no allocation: the runtime shares these
	case string:
		return stringHeader + roundUp(len(x))
	case map[string]any:
		n := int64(mapHeader)
		if len(x) > 0 {
			n += mapGroup + int64(max(len(x)-8, 0))*mapSlot
		}
		for k, val := range x {
			n += roundUp(len(k)) + valueSize(val, depth+1)
		}
		return n
	case []any:
		n := sliceHeader + int64(cap(x))*sliceSlot
		for _, val := range x {
			n += valueSize(val, depth+1)
		}
		return n
	default: // float64, json.Number and the scalars Go callers may use
		return boxedScalar + stringHeader
	}
}

func roundUp(n int) int64 {
	return int64((n + allocRounding - 1) / allocRounding * allocRounding)
}
