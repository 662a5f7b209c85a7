package problem

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// controlBody is a PUT /controls body of about n bytes: a regex control whose description pads it.
func controlBody(n int) []byte {
	const head = `{"name":"c","data":{"description":"`
	const tail = `","condition":{"selector":{"path":"input"},"evaluator":{"name":"regex","config":{"pattern":"x"}}},"action":{"decision":"deny"}}}`
	pad := n - len(head) - len(tail)
	if pad < 0 {
		pad = 0
	}
	return []byte(head + strings.Repeat("a", pad) + tail)
}

// eventsBody is a POST /observability/events body of about n bytes: events of a dozen fields each.
func eventsBody(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"events":[`)
	for i := 0; b.Len() < n-300; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"control_execution_id":"0f8fad5b-d9cb-469f-a165-%012d","agent_name":"bot","control_id":%d,"control_name":"c","check_stage":"pre","applies_to":"llm_call","action":"deny","matched":true,"confidence":1,"timestamp":"2026-01-01T00:00:00Z","metadata":{"k":"v"}}`, i, i)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

type benchControl struct {
	Name string          `json:"name"`
	Data json.RawMessage `json:"data"`
}

type benchEvents struct {
	Events []map[string]any `json:"events"`
}

// BenchmarkDecodeBytes is the strict decoding of a control body (internal/strictjson: keys compared
// exactly, duplicates refused, unknown fields refused) from 1 KB to 1 MB.
func BenchmarkDecodeBytes(b *testing.B) {
	for _, n := range []int{1 << 10, 16 << 10, 256 << 10, 1 << 20} {
		body := controlBody(n)
		b.Run(fmt.Sprintf("control-%dKB", n>>10), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				var v benchControl
				if err := DecodeBytes(body, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeLenientBytes is the lenient decoding of an events body, from 1 KB to 1 MB.
func BenchmarkDecodeLenientBytes(b *testing.B) {
	for _, n := range []int{1 << 10, 16 << 10, 256 << 10, 1 << 20} {
		body := eventsBody(n)
		b.Run(fmt.Sprintf("events-%dKB", n>>10), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				var v benchEvents
				if _, err := DecodeLenientBytes(body, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
