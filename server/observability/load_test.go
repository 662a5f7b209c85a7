package observability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

const (
	loadBatch   = 500    // events per POST, as issue 6 asks
	loadPosters = 4      // concurrent clients
	loadFull    = 100000 // the benchmark's volume
	loadCI      = 20000  // the test's volume, in every go test run
	loadCIRace  = 4000   // the same under the race detector (CI runs -race)
)

// loadBodies builds the request bodies of n events of agent in batches of loadBatch (outside the timing).
func loadBodies(tb testing.TB, agent string, n int) [][]byte {
	tb.Helper()
	var bodies [][]byte
	for start := 0; start < n; start += loadBatch {
		events := make([]guard.Event, min(loadBatch, n-start))
		for i := range events {
			e := mkEvent(start + i)
			e.ControlExecutionID = uuid.NewString()
			e.AgentName = agent
			e.Timestamp = time.Now().UTC().Add(-time.Duration(start+i) * time.Millisecond)
			events[i] = e
		}
		b, err := json.Marshal(map[string]any{"events": events})
		if err != nil {
			tb.Fatal(err)
		}
		bodies = append(bodies, b)
	}
	return bodies
}

// loadResult is what one load run measured.
type loadResult struct {
	accepted  time.Duration // until every POST was answered
	stored    time.Duration // until the final flush returned
	enqueued  int64
	dropped   int64
	persisted int
}

// runLoad posts the bodies through PostEvents from loadPosters goroutines, flushes, and counts what the
// store holds for agent.
func runLoad(tb testing.TB, h *harness, agent string, bodies [][]byte) loadResult {
	tb.Helper()
	var res loadResult
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for range loadPosters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(bodies) {
					return
				}
				req := httptest.NewRequest(http.MethodPost, eventsPath, bytes.NewReader(bodies[i]))
				rec := httptest.NewRecorder()
				h.mux.ServeHTTP(rec, req)
				var got PostEventsResponse
				want := http.StatusAccepted
				if h.api.Durable {
					want = http.StatusCreated
				}
				if rec.Code != want || json.Unmarshal(rec.Body.Bytes(), &got) != nil {
					failed.Store(fmt.Sprintf("POST = %d %s", rec.Code, rec.Body))
					return
				}
				atomic.AddInt64(&res.enqueued, int64(got.Enqueued+got.Stored))
				atomic.AddInt64(&res.dropped, int64(got.Dropped))
			}
		}()
	}
	wg.Wait()
	if msg := failed.Load(); msg != nil {
		tb.Fatal(msg)
	}
	res.accepted = time.Since(start)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := h.api.Recorder.Flush(ctx); err != nil {
		tb.Fatalf("flush: %v", err)
	}
	res.stored = time.Since(start)
	_, total, err := h.api.Store.QueryEvents(ctx, guard.EventQuery{AgentName: agent, Limit: 1})
	if err != nil {
		tb.Fatal(err)
	}
	res.persisted = total
	return res
}

func checkLoad(tb testing.TB, n int, res loadResult) {
	tb.Helper()
	if res.dropped != 0 || res.enqueued != int64(n) {
		tb.Fatalf("enqueued %d, dropped %d of %d events", res.enqueued, res.dropped, n)
	}
	if res.persisted != n {
		tb.Fatalf("the store holds %d events, %d were accepted", res.persisted, n)
	}
}

// loadStores are the stores of the load test and benchmark (PostgreSQL skips without its variable).
var loadStores = []struct {
	name string
	open func(testing.TB, ...store.Option) *store.Store
}{
	{"sqlite", storetest.SQLite},
	{"postgres", storetest.Postgres},
}

// loadModes are the ingest modes: buffered (202) and durable (OBSERVABILITY_DURABLE, 201 once committed).
var loadModes = []struct {
	name    string
	durable bool
}{{"buffered", false}, {"durable", true}}

// TestLoadEveryAcceptedEventIsStored is the count-matches check of the load benchmark at CI size.
func TestLoadEveryAcceptedEventIsStored(t *testing.T) {
	for _, s := range loadStores {
		for _, mode := range loadModes {
			t.Run(s.name+"/"+mode.name, func(t *testing.T) {
				n := loadCI
				if raceEnabled {
					n = loadCIRace
				}
				h := newHarness(t, s.open(t), RecorderConfig{FlushInterval: 50 * time.Millisecond})
				h.api.Durable = mode.durable
				res := runLoad(t, h, "load-test", loadBodies(t, "load-test", n))
				checkLoad(t, n, res)
				t.Logf("%s %s: %d events accepted in %v, stored in %v (%.0f events/s)", s.name, mode.name, n,
					res.accepted.Round(time.Millisecond), res.stored.Round(time.Millisecond), float64(n)/res.stored.Seconds())
			})
		}
	}
}

// BenchmarkLoad posts 100,000 events in batches of 500 through the API handler per iteration, flushes,
// checks the stored count, and reports events/s end to end (posted and written), in each ingest mode.
// Run with -bench=Load -benchtime=1x.
func BenchmarkLoad(b *testing.B) {
	for _, s := range loadStores {
		for _, mode := range loadModes {
			b.Run(s.name+"/"+mode.name, func(b *testing.B) {
				benchLoad(b, s.open, mode.durable)
			})
		}
	}
}

func benchLoad(b *testing.B, open func(testing.TB, ...store.Option) *store.Store, durable bool) {
	h := newHarness(b, open(b), RecorderConfig{})
	h.api.Durable = durable
	var stored, accepted time.Duration
	n := 0
	for b.Loop() {
		b.StopTimer()
		n++
		agent := fmt.Sprintf("load-%d", n)
		bodies := loadBodies(b, agent, loadFull)
		b.StartTimer()
		res := runLoad(b, h, agent, bodies)
		b.StopTimer()
		checkLoad(b, loadFull, res)
		stored += res.stored
		accepted += res.accepted
		b.StartTimer()
	}
	b.ReportMetric(float64(loadFull*n)/stored.Seconds(), "events/s")
	b.ReportMetric(float64(loadFull*n)/accepted.Seconds(), "accepted-events/s")
}
