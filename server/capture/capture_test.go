package capture

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
)

func TestEncodeStepRedacts(t *testing.T) {
	step := &guard.Step{Type: "llm", Name: "chat",
		Input: map[string]any{"password": "p", "messages": []any{
			map[string]any{"role": "user", "content": "secret one"}, map[string]any{"role": "user", "content": "secret two"}}},
		Output:  "answer",
		Context: map[string]any{"user_email": "a@b.c", "tenant": "t", "n": json.Number("12345678901234567890")}}
	tests := []struct {
		name  string
		paths []string
		want  string
	}{
		{"no paths", nil, `{"type":"llm","name":"chat","input":{"messages":[{"content":"secret one","role":"user"},{"content":"secret two","role":"user"}],"password":"p"},"output":"answer","context":{"n":12345678901234567890,"tenant":"t","user_email":"a@b.c"}}`},
		{"leaves", []string{"input.password", "context.user_email"}, `{"context":{"n":12345678901234567890,"tenant":"t","user_email":"[REDACTED]"},"input":{"messages":[{"content":"secret one","role":"user"},{"content":"secret two","role":"user"}],"password":"[REDACTED]"},"name":"chat","output":"answer","type":"llm"}`},
		{"wildcard in a list", []string{"input.messages.*.content"}, `{"context":{"n":12345678901234567890,"tenant":"t","user_email":"a@b.c"},"input":{"messages":[{"content":"[REDACTED]","role":"user"},{"content":"[REDACTED]","role":"user"}],"password":"p"},"name":"chat","output":"answer","type":"llm"}`},
		{"index", []string{"input.messages.1.content"}, `{"context":{"n":12345678901234567890,"tenant":"t","user_email":"a@b.c"},"input":{"messages":[{"content":"secret one","role":"user"},{"content":"[REDACTED]","role":"user"}],"password":"p"},"name":"chat","output":"answer","type":"llm"}`},
		{"whole field", []string{"output"}, `{"context":{"n":12345678901234567890,"tenant":"t","user_email":"a@b.c"},"input":{"messages":[{"content":"secret one","role":"user"},{"content":"secret two","role":"user"}],"password":"p"},"name":"chat","output":"[REDACTED]","type":"llm"}`},
		{"absent path changes nothing", []string{"context.nope", "input.messages.7.content"}, `{"type":"llm","name":"chat","input":{"messages":[{"content":"secret one","role":"user"},{"content":"secret two","role":"user"}],"password":"p"},"output":"answer","context":{"n":12345678901234567890,"tenant":"t","user_email":"a@b.c"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			paths, err := ParseRedactPaths(tt.paths)
			if err != nil {
				t.Fatal(err)
			}
			got, err := EncodeStep(step, paths)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestParseRedactPathsRefusesBadPaths(t *testing.T) {
	for _, p := range []string{"password", "type", "input..x", "context."} {
		if _, err := ParseRedactPaths([]string{p}); err == nil {
			t.Errorf("%q accepted", p)
		}
	}
}

// memStore is a CaptureStore in memory that can be made to fail or block.
type memStore struct {
	mu     sync.Mutex
	steps  []guard.CapturedStep
	fail   bool
	pruned int
	block  chan struct{}
	// the bounds of the last prune, and what it reports deleted
	pruneBefore   time.Time
	pruneMaxBytes int64
	pruneDeletes  int64
}

func (m *memStore) InsertCapturedSteps(ctx context.Context, steps []guard.CapturedStep) error {
	if m.block != nil {
		<-m.block
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		return errors.New("database away")
	}
	m.steps = append(m.steps, steps...)
	return nil
}
func (m *memStore) CapturedSteps(context.Context, guard.CaptureQuery) ([]guard.CapturedStep, bool, error) {
	return nil, false, nil
}
func (m *memStore) PruneCapturedSteps(_ context.Context, before time.Time, maxBytes int64) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pruned++
	m.pruneBefore, m.pruneMaxBytes = before, maxBytes
	return m.pruneDeletes, nil
}

// TestRecorderPrunesByTheConfiguredBounds: the recorder prunes the store at start (and every
// PruneInterval) with its own age and byte bounds (GUARD_CAPTURE_MAX_AGE_HOURS, GUARD_CAPTURE_MAX_BYTES),
// and counts what was deleted.
func TestRecorderPrunesByTheConfiguredBounds(t *testing.T) {
	st := &memStore{pruneDeletes: 7}
	start := time.Now()
	r, err := New(st, Config{Agents: []string{"bot"}, MaxAge: 2 * time.Hour, MaxBytes: 1234, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for r.Stats().Pruned == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.pruneMaxBytes != 1234 {
		t.Errorf("pruned to %d bytes, want 1234", st.pruneMaxBytes)
	}
	if want := start.Add(-2 * time.Hour); st.pruneBefore.Before(want) || st.pruneBefore.After(time.Now().Add(-2*time.Hour)) {
		t.Errorf("pruned steps before %v, want about %v", st.pruneBefore, want)
	}
	if p := r.Stats().Pruned; p != 7 {
		t.Errorf("Stats().Pruned = %d, want the 7 the store deleted", p)
	}
}

func TestNewIsOffWithoutAgents(t *testing.T) {
	r, err := New(&memStore{}, Config{Agents: []string{" ", ""}})
	if err != nil || r != nil {
		t.Fatalf("New = %v, %v; want nil, nil", r, err)
	}
	if r.Enabled("bot") {
		t.Error("a nil recorder captures")
	}
	if _, err := New(&memStore{}, Config{Agents: []string{"not valid!"}}); err == nil {
		t.Error("an invalid agent name is accepted")
	}
	if _, err := New(&memStore{}, Config{Agents: []string{"bot"}, RedactPaths: []string{"password"}}); err == nil {
		t.Error("a bad redaction path is accepted")
	}
}

func TestRecorderCapturesNamedAgentsAndBoundsItsBuffer(t *testing.T) {
	st := &memStore{block: make(chan struct{})}
	r, err := New(st, Config{Agents: []string{"Bot", "ops.agent"}, BufferSize: 3, BatchSize: 2, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Enabled("bot") || !r.Enabled("ops.agent") || r.Enabled("other") {
		t.Fatal("Enabled does not follow the agent list")
	}
	step := &guard.Step{Type: "llm", Name: "chat", Input: "x"}
	// The writer blocks on the first full batch; the buffer then holds at most 3 more.
	accepted := 0
	for range 10 {
		if r.Enqueue(Item{Agent: "bot", Step: step, Stage: guard.StagePre, Decision: guard.DecisionAllow}) {
			accepted++
		}
	}
	if accepted < 3 || accepted > 5 || r.Stats().Dropped != int64(10-accepted) {
		t.Fatalf("accepted %d, stats %+v", accepted, r.Stats())
	}
	close(st.block)
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := r.Stats(); s.Written != int64(accepted) || s.Pending != 0 || len(st.steps) != accepted {
		t.Fatalf("after close: %+v, stored %d", s, len(st.steps))
	}
	if r.Enqueue(Item{Agent: "bot", Step: step}) {
		t.Error("a closed recorder takes steps")
	}
	if st.pruned == 0 {
		t.Error("the recorder never pruned")
	}
}

func TestRecorderCountsLostBatches(t *testing.T) {
	st := &memStore{fail: true}
	r, err := New(st, Config{Agents: []string{"*"}, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(context.Background())
	if !r.Enabled("anyone") {
		t.Fatal("* does not capture every agent")
	}
	r.Enqueue(Item{Agent: "a", Step: &guard.Step{Type: "llm", Name: "c"}})
	if err := r.Flush(context.Background()); err == nil {
		t.Fatal("Flush hid the write error")
	}
	if s := r.Stats(); s.Lost != 1 || s.Pending != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// batchStore records the steps of each InsertCapturedSteps call.
type batchStore struct {
	memStore
	batches [][]string
}

func (b *batchStore) InsertCapturedSteps(ctx context.Context, steps []guard.CapturedStep) error {
	b.mu.Lock()
	names := make([]string, len(steps))
	for i, s := range steps {
		names[i] = s.StepName
	}
	b.batches = append(b.batches, names)
	b.mu.Unlock()
	return b.memStore.InsertCapturedSteps(ctx, steps)
}

func TestRecorderWritesInOrderInBatchesAndBoundsItsBytes(t *testing.T) {
	st := &batchStore{}
	// A batch of 10 is never full here: only Flush writes.
	r, err := New(st, Config{Agents: []string{"*"}, BufferBytes: 250, BatchSize: 10, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(context.Background())
	enqueue := func(name string) bool {
		return r.Enqueue(Item{Agent: "a", Step: &guard.Step{Type: "llm", Name: name}, Size: 100})
	}
	if !enqueue("s1") || !enqueue("s2") || enqueue("s3") {
		t.Fatal("the byte bound of 250 does not take exactly two steps of 100")
	}
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The written steps no longer count against the bound.
	if !enqueue("s4") || !enqueue("s5") {
		t.Fatalf("steps refused after the buffer was written: %+v", r.Stats())
	}
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"s1", "s2"}, {"s4", "s5"}}
	if fmt.Sprint(st.batches) != fmt.Sprint(want) {
		t.Fatalf("batches %v, want %v", st.batches, want)
	}
	if s := r.Stats(); s.Written != 4 || s.Dropped != 1 || s.Pending != 0 {
		t.Fatalf("stats %+v; want 4 written, 1 dropped, 0 pending", s)
	}
}

func TestRecorderWritesAtMostBatchSizeStepsAWrite(t *testing.T) {
	st := &batchStore{}
	st.block = make(chan struct{})
	r, err := New(st, Config{Agents: []string{"*"}, BatchSize: 2, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		r.Enqueue(Item{Agent: "a", Step: &guard.Step{Type: "llm", Name: fmt.Sprint(i)}})
	}
	close(st.block)
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, b := range st.batches {
		if len(b) == 0 || len(b) > 2 {
			t.Fatalf("batch of %d steps, want 1 or 2: %v", len(b), st.batches)
		}
		all = append(all, b...)
	}
	if fmt.Sprint(all) != "[0 1 2 3 4]" {
		t.Fatalf("written in the order %v, want 0..4", all)
	}
}
