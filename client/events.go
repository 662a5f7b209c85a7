package client

import (
	"context"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/guardrail-control/guard"
)

// wireEvent is guard.Event as it is sent: the same JSON, with the timestamp formatted once per protected
// call instead of once per event by time.Time's MarshalJSON (which is re-compacted by encoding/json).
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
	ExecutionDurationMS *float64       `json:"execution_duration_ms,omitempty"`
	EvaluatorName       string         `json:"evaluator_name,omitempty"`
	SelectorPath        string         `json:"selector_path,omitempty"`
	ErrorMessage        string         `json:"error_message,omitempty"`
	Source              string         `json:"source"`
	Metadata            map[string]any `json:"metadata,omitempty"`
}

// eventSink queues observability events and sends them in batches (when a batch fills, and every
// interval). The queue is bounded: when it is full new events are dropped and counted, so a slow or
// absent server never slows a protected call.
type eventSink struct {
	ch       chan wireEvent
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
		ch:       make(chan wireEvent, size),
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

// add queues e, or counts it as dropped when the queue is full. It never blocks.
func (s *eventSink) add(e wireEvent) {
	select {
	case s.ch <- e:
	default:
		s.dropped.Add(1)
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
		case e := <-s.ch:
			buf = s.appendEvent(buf, e)
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

// appendEvent appends e to buf and sends buf once it holds a full batch.
func (s *eventSink) appendEvent(buf []wireEvent, e wireEvent) []wireEvent {
	buf = append(buf, e)
	if len(buf) >= s.batch {
		buf = s.send(buf)
	}
	return buf
}

// drain sends buf and everything in the queue now.
func (s *eventSink) drain(buf []wireEvent) []wireEvent {
	for {
		select {
		case e := <-s.ch:
			buf = s.appendEvent(buf, e)
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
