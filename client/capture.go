package client

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/guardrail-control/guard"
)

// stepSink queues the steps evaluated in-process (Config.CaptureSteps) and posts them to
// POST /steps/captured in batches, from one goroutine. The step is encoded when it is queued: the caller
// may change its step (the post stage fills Output) or the values it points to once the call returns.
// A full queue drops the new step and counts it, so a slow or absent server never slows a protected call.
type stepSink struct {
	ch chan CapturedStep
	sinkControl
	dropped  atomic.Int64
	sent     atomic.Int64
	batch    int
	interval time.Duration
	timeout  time.Duration
	post     func(context.Context, []CapturedStep) error
	log      *zap.Logger
	failing  bool // owned by run
}

func newStepSink(size, batch int, interval, timeout time.Duration, post func(context.Context, []CapturedStep) error, log *zap.Logger) *stepSink {
	s := &stepSink{
		ch:          make(chan CapturedStep, size),
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

// add encodes step and queues it, or counts it as dropped. It never blocks.
func (s *stepSink) add(agent string, step *guard.Step, stage guard.Stage, d guard.Decision) {
	raw, err := json.Marshal(step)
	if err != nil {
		s.dropped.Add(1)
		return
	}
	select {
	case s.ch <- CapturedStep{AgentName: agent, Step: raw, Stage: stage, Decision: d, Timestamp: time.Now().UTC()}:
	default:
		s.dropped.Add(1)
	}
}

func (s *stepSink) run() {
	defer close(s.done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	buf := make([]CapturedStep, 0, s.batch)
	for {
		select {
		case st := <-s.ch:
			if buf = append(buf, st); len(buf) >= s.batch {
				buf = s.send(buf)
			}
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

func (s *stepSink) drain(buf []CapturedStep) []CapturedStep {
	for {
		select {
		case st := <-s.ch:
			if buf = append(buf, st); len(buf) >= s.batch {
				buf = s.send(buf)
			}
		default:
			return s.send(buf)
		}
	}
}

// send posts buf and returns it emptied. A failed batch is dropped and counted: captured steps are a
// sample for replay and must not pile up while the server is away. Failures are logged once per streak.
func (s *stepSink) send(buf []CapturedStep) []CapturedStep {
	if len(buf) == 0 {
		return buf
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	err := s.post(ctx, buf)
	cancel()
	if err != nil {
		s.dropped.Add(int64(len(buf)))
		if !s.failing {
			s.failing = true
			s.log.Warn("captured steps could not be sent; dropping them until the server takes them again",
				zap.Int("steps", len(buf)), zap.Error(err))
		}
	} else {
		s.sent.Add(int64(len(buf)))
		if s.failing {
			s.failing = false
			s.log.Info("captured steps are sent again")
		}
	}
	clear(buf)
	return buf[:0]
}
