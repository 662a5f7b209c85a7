package observability

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
)

// largeEventsBody is a request of n events whose metadata is as costly as the limits allow: 511 objects
// of one member each, about 4 KiB of JSON that decode to about 190 KB of maps.
func largeEventsBody(t testing.TB, n int) []byte {
	t.Helper()
	md := json.RawMessage(`{"m":[` + strings.TrimSuffix(strings.Repeat(`{"a":1},`, MaxMetadataElements/2-1), ",") + `]}`)
	events := make([]map[string]any, n)
	for i := range events {
		e := wireEvent(t, i)
		e["control_execution_id"] = uuid.NewString()
		e["metadata"] = md
		events[i] = e
	}
	b, err := json.Marshal(postBody(events...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// memoryBound is the live heap the tests below allow: the buffer's 64 MiB, plus the test binary, one
// batch being written and requests being decoded. Without the byte bound, the buffer (100,000 events)
// would hold these events until the heap passed gigabytes.
const memoryBound = DefaultBufferBytes + 64<<20

// TestPostEventsMemoryStaysBoundedWhileTheDatabaseIsBlocked posts large-but-valid events, far more than
// the buffer's 64 MiB can hold, while every write blocks: the live heap (after a GC) stays under
// memoryBound, the requests past the buffer get 503 with Retry-After, and once the database answers
// every event that was accepted is stored.
func TestPostEventsMemoryStaysBoundedWhileTheDatabaseIsBlocked(t *testing.T) {
	requests := 30 // 1,800 events, ~330 MB of decoded metadata
	if raceEnabled {
		requests = 20
	}
	st := &memStore{block: make(chan struct{})}
	h := newHarness(t, st, RecorderConfig{})
	body := largeEventsBody(t, 60)
	accepted, refused := 0, 0
	peak := heapInUse()
	for i := range requests {
		req := httptest.NewRequest(http.MethodPost, eventsPath, bytes.NewReader(body))
		rec := httptest.NewRecorder()
		h.mux.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusAccepted:
			accepted += 60
		case http.StatusServiceUnavailable:
			problemOf(t, rec, http.StatusServiceUnavailable, CodeBufferFull)
			if rec.Header().Get("Retry-After") == "" {
				t.Fatal("503 without Retry-After")
			}
			refused += 60
		default:
			t.Fatalf("request %d: %d %s", i, rec.Code, rec.Body)
		}
		if i%10 == 9 { // fail as soon as the bound is passed, before the machine runs out of memory
			peak = max(peak, heapInUse())
			if peak > memoryBound {
				t.Fatalf("after %d requests (%d events accepted) the live heap is %d MiB, over the bound of %d MiB",
					i+1, accepted, peak>>20, memoryBound>>20)
			}
		}
	}
	checkResident(t, "with the buffer full and the database blocked")
	s := h.api.Recorder.Stats()
	t.Logf("accepted %d events, refused %d; buffer %d MiB (estimate); peak live heap %d MiB (bound %d MiB)",
		accepted, refused, s.PendingBytes>>20, peak>>20, memoryBound>>20)
	if refused == 0 || s.PendingBytes > DefaultBufferBytes {
		t.Fatalf("refused %d events, buffer holds %d bytes: the buffer did not fill, or grew past its bound", refused, s.PendingBytes)
	}
	close(st.block)
	h.flush()
	if st.count() != accepted {
		t.Fatalf("stored %d events, accepted %d", st.count(), accepted)
	}
	if s := h.api.Recorder.Stats(); s.PendingBytes != 0 || s.Pending != 0 {
		t.Fatalf("after the flush the recorder still counts %d events, %d bytes", s.Pending, s.PendingBytes)
	}
}

// TestDurablePostEventsMemoryStaysBounded is the same in durable mode: requests wait on the blocked
// database while they hold the buffer's room; those that do not fit are refused at once.
func TestDurablePostEventsMemoryStaysBounded(t *testing.T) {
	clients := 20 // 1,200 events, ~220 MB of decoded metadata if every request were held
	if raceEnabled {
		clients = 14
	}
	st := &memStore{block: make(chan struct{})}
	h := newHarness(t, st, RecorderConfig{})
	h.api.Durable = true
	body := largeEventsBody(t, 60)
	codes := make([]int, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := httptest.NewRecorder()
			h.mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, eventsPath, bytes.NewReader(body)))
			codes[i] = rec.Code
		}()
	}
	// Every request is either refused (answered) or waiting in the store.
	waitFor(t, "every request to be refused or to wait on the database", func() bool {
		s := h.api.Recorder.Stats()
		return s.Refused+int64(st.callCount()*60) == int64(clients*60)
	})
	heap := heapInUse()
	checkResident(t, "with requests waiting on the blocked database")
	s := h.api.Recorder.Stats()
	t.Logf("%d requests wait on the database, %d events refused; buffer %d MiB (estimate); live heap %d MiB (bound %d MiB)",
		st.callCount(), s.Refused, s.PendingBytes>>20, heap>>20, memoryBound>>20)
	if heap > memoryBound || s.PendingBytes > DefaultBufferBytes || s.Refused == 0 {
		t.Fatalf("live heap %d MiB, buffer %d bytes, %d refused", heap>>20, s.PendingBytes, s.Refused)
	}
	close(st.block)
	wg.Wait()
	created := 0
	for _, c := range codes {
		switch c {
		case http.StatusCreated:
			created++
		case http.StatusServiceUnavailable:
		default:
			t.Fatalf("status %d", c)
		}
	}
	if st.count() != created*60 {
		t.Fatalf("stored %d events, %d requests were answered 201", st.count(), created)
	}
}

// TestPostEventsLargerThanTheWholeBufferAre413 posts a request whose events would not fit even in an
// empty buffer: a 503 with Retry-After would have the client send it again for ever, so it is a 413
// telling it to send smaller requests, in both modes, and nothing of it is taken.
func TestPostEventsLargerThanTheWholeBufferAre413(t *testing.T) {
	body := largeEventsBody(t, 60) // ~11 MB of decoded metadata against a 1 MiB buffer
	for _, durable := range []bool{false, true} {
		st := &memStore{}
		h := newHarness(t, st, RecorderConfig{BufferBytes: 1 << 20})
		h.api.Durable = durable
		rec := httptest.NewRecorder()
		h.mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, eventsPath, bytes.NewReader(body)))
		problemOf(t, rec, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
		if ra := rec.Header().Get("Retry-After"); ra != "" {
			t.Errorf("durable=%v: Retry-After %q on a request that can never fit", durable, ra)
		}
		if s := h.api.Recorder.Stats(); s.Pending != 0 || s.PendingBytes != 0 || st.callCount() != 0 {
			t.Errorf("durable=%v: something of the refused request was taken: %+v, %d writes", durable, s, st.callCount())
		}
		// A request that fits an empty buffer is still taken.
		rec = httptest.NewRecorder()
		h.mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, eventsPath, bytes.NewReader(largeEventsBody(t, 2))))
		if rec.Code != http.StatusAccepted && rec.Code != http.StatusCreated {
			t.Errorf("durable=%v: a small request got %d %s", durable, rec.Code, rec.Body)
		}
	}
}
