// Package batcher holds what the server's two batch writers share: the observability recorder's events
// (server/observability) and the captured steps (server/capture). Both keep items in a bounded buffer
// and write them in batches from one goroutine. Shared here are the buffer (a FIFO in batch-sized
// chunks, queue.go), the signals between a recorder and its writer goroutine (wake-up, Flush, Close;
// signals.go) and the rate limit of the log lines that count dropped items (droplog.go).
//
// The rules stay with each recorder, because they differ: what bounds the buffer (the events' also
// count those being written), when a write starts, how a write that fails is retried (events are
// retried with backoff and kept through an outage; captured steps are a sample and are given up at
// once), and what is counted.
package batcher
