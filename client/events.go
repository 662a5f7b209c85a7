package client

import (
	"context"
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
	ch       chan evalRecord
	queued   atomic.Int64 // events in ch
	size     int64
	flushReq chan chan struct{}
	stop     chan struct{}
	done     chan struct{}
	dropped  atomic.Int64
	sent     atomic.Int64
	batch    int
	interval time.Duration
	timeout  time.Duration
	post     func(context.Context, []wireEvent) error
	log      *zap.Logger
	failing  bool // owned by run
}

func newEventSink(size, batch int, interval, timeout time.Duration, post func(context.Context, []wireEvent) error, log *zap.Logger) *eventSink {
	s := &eventSink{
		// Every record stands for at least one event, so size records never fill the channel before
		// size events fill the queue.
		ch:       make(chan evalRecord, size),
		size:     int64(size),
		flushReq: make(chan chan struct{}),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
		batch:    batch,
		interval: interval,
		timeout:  timeout,
		post:     post,
		log:      log,
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

// flush sends everything queued so far and returns when done (or when the sink has stopped).
func (s *eventSink) flush(ctx context.Context) {
	ack := make(chan struct{})
	select {
	case s.flushReq <- ack:
	case <-s.done:
		return
	case <-ctx.Done():
		return
	}
	select {
	case <-ack:
	case <-s.done:
	case <-ctx.Done():
	}
}

// close sends what is queued and stops the sender goroutine; it returns once the goroutine has exited.
func (s *eventSink) close() {
	close(s.stop)
	<-s.done
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
			buf = s.drain(buf)
			close(ack)
		case <-s.stop:
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

// send posts buf and returns it emptied. A failed batch is dropped (and counted): events are records,
// best effort, and must not pile up while the server is away. Failures are logged once per streak.
func (s *eventSink) send(buf []wireEvent) []wireEvent {
	if len(buf) == 0 {
		return buf
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	err := s.post(ctx, buf)
	cancel()
	switch {
	case err != nil:
		s.dropped.Add(int64(len(buf)))
		if !s.failing {
			s.failing = true
			s.log.Warn("observability events could not be sent; dropping them until the server accepts events again",
				zap.Int("events", len(buf)), zap.Error(err))
		}
	default:
		s.sent.Add(int64(len(buf)))
		if s.failing {
			s.failing = false
			s.log.Info("observability events are being sent again")
		}
	}
	clear(buf)
	return buf[:0]
}
