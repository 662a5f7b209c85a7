package observability

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	guard "github.com/guardrail-control/guard"
)

// TestEventSizeCoversTheHeap decodes metadata of several shapes many times, as POST /observability/events
// does, and checks that the estimate the buffer is bounded by is at least the heap the events really hold
// (and not wildly above it, which would waste the buffer).
func TestEventSizeCoversTheHeap(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes the heap's allocation sizes")
	}
	shapes := map[string]json.RawMessage{
		"none":                nil,
		"small":               json.RawMessage(`{"policy":"gold","score":0.5,"ok":true}`),
		"empty objects":       emptyObjects(MaxMetadataElements - 1),
		"one-member objects":  json.RawMessage(`{"m":[` + strings.TrimSuffix(strings.Repeat(`{"a":1},`, MaxMetadataElements/2-1), ",") + `]}`),
		"long strings":        padded(MaxMetadataBytes),
		"wide object":         wideObject(MaxMetadataElements),
		"numbers":             json.RawMessage(`{"n":[` + strings.TrimSuffix(strings.Repeat(`1.5,`, MaxMetadataElements-1), ",") + `]}`),
		"deep":                nested(MaxMetadataDepth),
		"short strings array": json.RawMessage(`{"s":[` + strings.TrimSuffix(strings.Repeat(`"abc",`, MaxMetadataElements-1), ",") + `]}`),
	}
	for name, raw := range shapes {
		t.Run(name, func(t *testing.T) {
			const n = 300
			events := make([]guard.Event, n)
			var estimate int64
			before := heapInUse()
			for i := range events {
				e := mkEvent(i)
				e.ControlExecutionID = strings.Clone(e.ControlExecutionID)
				m, ps := checkMetadata(raw, "events.0")
				if len(ps) > 0 {
					t.Fatalf("metadata refused: %+v", ps)
				}
				e.Metadata = m
				events[i] = e
			}
			held := heapInUse() - before
			for i := range events {
				estimate += eventSize(&events[i])
			}
			runtime.KeepAlive(events)
			ratio := float64(estimate) / float64(held)
			t.Logf("%s: estimate %d bytes per event, heap %d (ratio %.2f)", name, estimate/n, held/n, ratio)
			if ratio < 1 {
				t.Errorf("the estimate (%d) is below the heap held (%d)", estimate, held)
			}
			if ratio > 3 && held/n > 1024 {
				t.Errorf("the estimate (%d) is more than 3 times the heap held (%d)", estimate, held)
			}
		})
	}
}

func wideObject(n int) json.RawMessage {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"k%d":%d`, i, i)
	}
	b.WriteString("}")
	return json.RawMessage(b.String())
}

// heapInUse is the live heap after a full collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
