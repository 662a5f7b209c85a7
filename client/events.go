package client

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/guardrail-control/guard"
)

// wireEvent is guard.Event as it is sent: the same JSON, built by the sender goroutine from an evalRecord
// (so a protected call pays for none of it), with the timestamp formatted once per evaluation instead of
// once per event by time.Time's MarshalJSON, and no pointer or map per event.
type wireEvent struct {
	ControlExecutionID  string         `json:"control_execution_id"`
	TraceID             string         `json:"trace_id,omitempty"`
	SpanID              string         `json:"span_id,omitempty"`
	AgentName           string         `json:"agent_name"`
	ControlID           int64          `json:"control_id"`
	ControlName         string         `json:"control_name"`
	ControlVersion      int            `json:"control_version,omitempty"`
	CheckStage          guard.Stage    `json:"check_stage"`
	StepType            string         `json:"step_type"`
	StepName            string         `json:"step_name"`
	Action              guard.Decision `json:"action"`
	Matched             bool           `json:"matched"`
	Confidence          float64        `json:"confidence"`
	Timestamp           string         `json:"timestamp"`
	ExecutionDurationMS float64        `json:"execution_duration_ms,omitzero"`
	EvaluatorName       string         `json:"evaluator_name,omitempty"`
	SelectorPath        string         `json:"selector_path,omitempty"`
	ErrorMessage        string         `json:"error_message,omitempty"`
	Source              string         `json:"source"`
	Metadata            eventMeta      `json:"metadata,omitzero"`
	Shadow              bool           `json:"shadow,omitempty"`
}

// eventMeta is the metadata of an event: the Policy label of the protected step, when it has one.
type eventMeta struct {
	Policy string `json:"policy,omitempty"`
}

// evalRecord is what a protected call queues for one in-process evaluation: its result and the step
// around it. The sender goroutine turns it into one event per evaluated control. res comes from
// guard.Engine.Evaluate, which allocates a new Result per call; nothing writes to it after it is queued.
type evalRecord struct {
	res      *guard.Result
	agent    string
	stepType string
	stepName string
	stage    guard.Stage
	tr       traceIDs
	policy   string
	at       time.Time
	shadow   bool // the result of Engine.EvaluateShadow: every event is a shadow event
}

// events returns how many events r stands for: one per evaluated control.
func (r *evalRecord) events() int {
	return len(r.res.Matches) + len(r.res.Errors) + len(r.res.NonMatches)
}

// eventSink queues observability events and sends them in batches (when a batch fills, and every
// interval). The queue holds evaluations (one channel send per protected stage) but is bounded in events:
// when the events queued would exceed its size, the new evaluation's events are all dropped and counted,
// so a slow or absent server never slows a protected call.
type eventSink struct {
	ch     chan evalRecord
	queued atomic.Int64 // events in ch
	size   int64
	sinkControl
	dropped  atomic.Int64
	sent     atomic.Int64
	batch    int
	interval time.Duration
	timeout  time.Duration
	post     func(context.Context, []wireEvent) error
	log      *zap.Logger
	failing  bool // owned by run
	// A batch the server refuses with 503 (its buffer is full, or in durable mode its database did not
	// commit: nothing of the request was taken) is kept and sent again after a backoff, instead of being
	// dropped. Owned by run.
	retryAt  time.Time
	backoff  time.Duration
	stopping bool // close is draining: no more waiting, what is refused now is dropped
}

// Retry of refused batches: the first wait, its ceiling, and how many batches of events the sink keeps for
// a retry at most (beyond, the oldest are dropped and counted, so a server that refuses for long never
// makes the agent hold more than this).
const (
	retryFirst       = time.Second
	retryMax         = 30 * time.Second
	retainingBatches = 10
)

func newEventSink(size, batch int, interval, timeout time.Duration, post func(context.Context, []wireEvent) error, log *zap.Logger) *eventSink {
	s := &eventSink{
		// Every record stands for at least one event, so size records never fill the channel before
		// size events fill the queue.
		ch:          make(chan evalRecord, size),
		size:        int64(size),
		sinkControl: newSinkControl(),
		batch:       batch,
		interval:    interval,
		timeout:     timeout,
		post:        post,
		log:         log,
	}
	go s.run()
	return s
}

// add queues the events of r, or counts them all as dropped when they do not fit in the queue (unless the
// queue is empty). It never blocks.
func (s *eventSink) add(r evalRecord) {
	n := int64(r.events())
	if n == 0 {
		return
	}
	// An evaluation with more events than the queue holds is taken when the queue is empty, so a small
	// queue still passes the events of a large policy: the bound is max(size, one evaluation).
	if q := s.queued.Add(n); q > s.size && q != n {
		s.queued.Add(-n)
		s.dropped.Add(n)
		return
	}
	select {
	case s.ch <- r:
	default: // unreachable while every record holds an event; counted all the same
		s.queued.Add(-n)
		s.dropped.Add(n)
	}
}

func (s *eventSink) run() {
	defer close(s.done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	buf := make([]wireEvent, 0, s.batch)
	for {
		select {
		case r := <-s.ch:
			buf = s.appendRecord(buf, &r)
		case <-t.C:
			buf = s.send(buf)
		case ack := <-s.flushReq:
			s.retryAt = time.Time{} // a flush tries now, even while waiting to retry
			buf = s.drain(buf)
			close(ack)
		case <-s.stop:
			s.stopping = true
			s.drain(buf)
			return
		}
	}
}

// appendRecord takes r off the queue and appends its events to buf, sending each full batch.
func (s *eventSink) appendRecord(buf []wireEvent, r *evalRecord) []wireEvent {
	s.queued.Add(-int64(r.events()))
	ts := r.at.UTC().Format(time.RFC3339Nano)
	for _, list := range [...][]guard.ControlResult{r.res.Matches, r.res.Errors, r.res.NonMatches} {
		for i := range list {
			cr := &list[i]
			id := cr.ControlExecutionID
			if id == "" {
				id = newExecutionID()
			}
			ev := wireEvent{
				ControlExecutionID: id,
				TraceID:            r.tr.traceID,
				SpanID:             r.tr.spanID,
				AgentName:          r.agent,
				ControlID:          cr.ControlID,
				ControlName:        cr.ControlName,
				ControlVersion:     cr.ControlVersion,
				CheckStage:         r.stage,
				StepType:           r.stepType,
				StepName:           r.stepName,
				Action:             cr.Action,
				Matched:            cr.Result.Matched,
				Confidence:         cr.Result.Confidence,
				Timestamp:          ts,
				EvaluatorName:      cr.EvaluatorName,
				SelectorPath:       cr.SelectorPath,
				ErrorMessage:       cr.Result.Error,
				Source:             "sdk",
				Metadata:           eventMeta{Policy: r.policy},
				Shadow:             r.shadow,
			}
			if cr.Duration > 0 {
				ev.ExecutionDurationMS = float64(cr.Duration) / float64(time.Millisecond)
			}
			buf = append(buf, ev)
			if len(buf) >= s.batch {
				buf = s.send(buf)
			}
		}
	}
	return buf
}

// drain sends buf and everything in the queue now.
func (s *eventSink) drain(buf []wireEvent) []wireEvent {
	for {
		select {
		case r := <-s.ch:
			buf = s.appendRecord(buf, &r)
		default:
			return s.send(buf)
		}
	}
}

// send posts buf in batches and returns what is left of it. A batch the server refuses with 503 is kept,
// with what follows it, and sent again after a backoff (1 s doubling to 30 s; at most retainingBatches
// batches are kept, the oldest events beyond are dropped and counted). Any other failure drops the events
// (and counts them): events are records, best effort, and must not pile up while the server is away.
// Failures are logged once per streak.
func (s *eventSink) send(buf []wireEvent) []wireEvent {
	if len(buf) == 0 {
		return buf
	}
	if !s.stopping && time.Now().Before(s.retryAt) {
		return s.bound(buf) // the server asked for time: wait, keeping at most retainingBatches batches
	}
	for len(buf) > 0 {
		n := min(len(buf), s.batch)
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
		err := s.post(ctx, buf[:n])
		cancel()
		if err == nil {
			s.sent.Add(int64(n))
			if s.failing {
				s.failing = false
				s.log.Info("observability events are being sent again")
			}
			s.retryAt, s.backoff = time.Time{}, 0
			buf = shift(buf, n)
			continue
		}
		var ae *APIError
		if errors.As(err, &ae) && ae.Status == http.StatusServiceUnavailable && !s.stopping {
			s.backoff = min(max(2*s.backoff, retryFirst), retryMax)
			s.retryAt = time.Now().Add(s.backoff)
			if !s.failing {
				s.failing = true
				s.log.Warn("observability events refused by the server (503); keeping them to send again",
					zap.Int("events", len(buf)), zap.Duration("retry_in", s.backoff), zap.Error(err))
			}
			return s.bound(buf)
		}
		s.dropped.Add(int64(len(buf)))
		if !s.failing {
			s.failing = true
			s.log.Warn("observability events could not be sent; dropping them until the server accepts events again",
				zap.Int("events", len(buf)), zap.Error(err))
		}
		clear(buf)
		return buf[:0]
	}
	return buf
}

// bound drops (and counts) the oldest events of buf beyond retainingBatches batches.
func (s *eventSink) bound(buf []wireEvent) []wireEvent {
	limit := retainingBatches * s.batch
	if over := len(buf) - limit; over > 0 {
		s.dropped.Add(int64(over))
		buf = shift(buf, over)
	}
	return buf
}

// shift removes the first n events of buf, moving the rest to the front and clearing the slots left
// behind so that they hold no strings.
func shift(buf []wireEvent, n int) []wireEvent {
	old := len(buf)
	buf = append(buf[:0], buf[n:]...)
	clear(buf[len(buf):old])
	return buf
}
