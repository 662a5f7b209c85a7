package observability

import (
	"context"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
)

// discardStore accepts every batch and keeps nothing.
type discardStore struct{ memStore }

func (*discardStore) InsertEvents(context.Context, []guard.Event) error { return nil }

// BenchmarkRecorderEnqueue is the recorder's share of one POST /evaluation with observability on:
// enqueueing the 10 events of an evaluation of 10 controls (server events carry no metadata).
func BenchmarkRecorderEnqueue(b *testing.B) {
	r := NewRecorder(&discardStore{}, RecorderConfig{FlushInterval: time.Hour})
	defer func() { _ = r.Close(context.Background()) }()
	events := mkEvents(0, 10)
	for i := range events {
		events[i].Metadata = nil
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if enq, _ := r.Enqueue(events); enq != len(events) {
			b.Fatalf("enqueued %d", enq)
		}
		if n++; n%4000 == 0 { // 40,000 events: let the writer empty the buffer before it fills
			if err := r.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	}
}
