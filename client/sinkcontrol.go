package client

import "context"

// sinkControl is the control of a batching sender goroutine (the event sink and the step sink): flush asks
// the goroutine to send what it holds, close stops it. The goroutine selects on flushReq and stop, and
// closes done when it returns.
type sinkControl struct {
	flushReq chan chan struct{}
	stop     chan struct{}
	done     chan struct{}
}

func newSinkControl() sinkControl {
	return sinkControl{flushReq: make(chan chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
}

// flush sends everything queued so far and returns when done (or when the sink has stopped, or ctx ends).
func (c *sinkControl) flush(ctx context.Context) {
	ack := make(chan struct{})
	select {
	case c.flushReq <- ack:
	case <-c.done:
		return
	case <-ctx.Done():
		return
	}
	select {
	case <-ack:
	case <-c.done:
	case <-ctx.Done():
	}
}

// close stops the sender goroutine (which sends what is queued first) and returns once it has exited.
func (c *sinkControl) close() {
	close(c.stop)
	<-c.done
}
