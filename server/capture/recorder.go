// Package capture keeps the steps the server evaluates, for the replay of a draft control set against
// real traffic (issue 14). It is off unless agents are named: only their steps are kept, redacted by a
// configured list of selector paths before they are stored, written in batches off the request path, and
// pruned by age and by total bytes, oldest first.
package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/internal/batcher"
)

// Defaults of Config.
const (
	DefaultMaxAge        = 7 * 24 * time.Hour
	DefaultMaxBytes      = 256 << 20
	DefaultBufferSize    = 10000
	DefaultBufferBytes   = 32 << 20
	DefaultBatchSize     = 500
	DefaultFlushInterval = 2 * time.Second
	DefaultPruneInterval = time.Minute
	defaultWriteTimeout  = 30 * time.Second
	// defaultStepSize is the size charged to the buffer for a step whose size the caller does not know.
	defaultStepSize = 4 << 10
	dropLogEvery    = 10 * time.Second
)

// Config configures a Recorder; zero fields take the defaults.
type Config struct {
	// Agents are the agent names whose steps are kept (normalised like agent names); "*" keeps every
	// agent's. Empty: nothing is kept (New returns nil).
	Agents []string
	// RedactPaths are selector paths (input..., output..., context...) whose values are replaced by
	// "[REDACTED]" before a step is stored.
	RedactPaths []string
	// MaxAge and MaxBytes bound the stored steps: older ones, then the oldest until the step bytes fit,
	// are deleted every PruneInterval.
	MaxAge        time.Duration
	MaxBytes      int64
	PruneInterval time.Duration
	// BufferSize and BufferBytes bound the steps waiting in memory to be written; beyond, new steps are
	// dropped (counted and logged), never slowing an evaluation.
	BufferSize    int
	BufferBytes   int64
	BatchSize     int
	FlushInterval time.Duration
	Logger        *zap.Logger
}

func (c *Config) defaults() {
	if c.MaxAge <= 0 {
		c.MaxAge = DefaultMaxAge
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.PruneInterval <= 0 {
		c.PruneInterval = DefaultPruneInterval
	}
	if c.BufferSize <= 0 {
		c.BufferSize = DefaultBufferSize
	}
	if c.BufferBytes <= 0 {
		c.BufferBytes = DefaultBufferBytes
	}
	if c.BatchSize <= 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.FlushInterval <= 0 {
		c.FlushInterval = DefaultFlushInterval
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
}

// Item is one evaluated step offered to the recorder. Step is read (encoded) later, on the writer
// goroutine: the caller must not change it after Enqueue.
type Item struct {
	Agent    string
	Step     *guard.Step
	Stage    guard.Stage
	Decision guard.Decision
	Time     time.Time
	Source   string // "server" or "sdk"
	// Size estimates the step's bytes (the request body's length will do); zero charges a default.
	Size int64
}

// Stats are the recorder's counters since it started.
type Stats struct {
	Pending int   // steps waiting to be written
	Dropped int64 // steps refused: buffer full or recorder closed
	Written int64 // steps stored
	Lost    int64 // steps that could not be encoded or written
	Pruned  int64 // stored steps deleted by the age and byte bounds
}

// Recorder buffers captured steps and writes them in batches from one goroutine.
type Recorder struct {
	store guard.CaptureStore
	cfg   Config
	all   bool
	names map[string]bool // read-only after New
	paths []RedactPath

	mu      sync.Mutex
	buf     batcher.Queue[Item] // chunks of BatchSize steps
	bytes   int64               // estimated bytes of the steps in buf
	closed  bool
	stats   Stats
	dropLog batcher.DropLog

	sig *batcher.Signals
}

// New starts a recorder writing to st, or returns nil, nil when cfg names no agent (capture is off).
// It fails on a redaction path it cannot use or an agent name that is not valid.
func New(st guard.CaptureStore, cfg Config) (*Recorder, error) {
	cfg.defaults()
	paths, err := ParseRedactPaths(cfg.RedactPaths)
	if err != nil {
		return nil, err
	}
	r := &Recorder{store: st, cfg: cfg, names: map[string]bool{}, paths: paths}
	for _, a := range cfg.Agents {
		a = strings.TrimSpace(a)
		switch a {
		case "":
			continue
		case "*":
			r.all = true
			continue
		}
		n, err := guard.NormalizeAgentName(a)
		if err != nil {
			return nil, fmt.Errorf("capture: agent %q: %w", a, err)
		}
		r.names[n] = true
	}
	if !r.all && len(r.names) == 0 {
		return nil, nil
	}
	if st == nil {
		return nil, fmt.Errorf("capture: the store does not keep captured steps")
	}
	r.buf = batcher.NewQueue[Item](cfg.BatchSize)
	r.sig = batcher.NewSignals()
	go r.run()
	return r, nil
}

// Enabled reports whether the steps of agent (a normalised name) are captured. A nil recorder captures
// nothing.
func (r *Recorder) Enabled(agent string) bool {
	return r != nil && (r.all || r.names[agent])
}

// Agents describes what is captured: "*" or the agent names, for logs and answers.
func (r *Recorder) Agents() []string {
	if r == nil {
		return nil
	}
	if r.all {
		return []string{"*"}
	}
	out := make([]string, 0, len(r.names))
	for n := range r.names {
		out = append(out, n)
	}
	return out
}

// Enqueue buffers it for writing, or drops it (and counts it) when the buffer is full or the recorder
// is closed. It never waits on the database.
func (r *Recorder) Enqueue(it Item) bool {
	size := it.Size
	if size <= 0 {
		size = defaultStepSize
	}
	it.Size = size
	r.mu.Lock()
	if r.closed || r.buf.Len() >= r.cfg.BufferSize || r.bytes+size > r.cfg.BufferBytes {
		r.stats.Dropped++
		logN := r.dropLog.Add(1, dropLogEvery)
		r.mu.Unlock()
		if logN > 0 {
			r.cfg.Logger.Warn("captured steps dropped: the capture buffer is full or closed (logged at most every 10s)",
				zap.Int64("dropped", logN), zap.Int("buffer_size", r.cfg.BufferSize))
		}
		return false
	}
	r.buf.Push(it, size)
	r.bytes += size
	full := r.buf.FullBatch()
	r.mu.Unlock()
	if full {
		r.sig.Wake()
	}
	return true
}

// Stats returns the recorder's counters.
func (r *Recorder) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats
	s.Pending = r.buf.Len()
	return s
}

// Flush writes every step buffered when it is called.
func (r *Recorder) Flush(ctx context.Context) error {
	_, err := r.sig.Flush(ctx)
	return err
}

// Close refuses further steps, writes what is buffered and stops the writer. Calling it again is
// harmless.
func (r *Recorder) Close(ctx context.Context) error {
	if r == nil {
		return nil
	}
	r.sig.Stop(func() {
		r.mu.Lock()
		r.closed = true
		r.mu.Unlock()
	})
	select {
	case <-r.sig.Done():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("capture: close: %w", ctx.Err())
	}
}

func (r *Recorder) run() {
	defer r.sig.Exit()
	flush := time.NewTicker(r.cfg.FlushInterval)
	defer flush.Stop()
	prune := time.NewTicker(r.cfg.PruneInterval)
	defer prune.Stop()
	r.prune()
	for {
		select {
		case <-r.sig.Stopping():
			_ = r.writeAll()
			return
		case <-flush.C:
			_ = r.writeAll()
		case <-r.sig.Woken():
			_ = r.writeAll()
		case reply := <-r.sig.Flushes():
			reply <- r.writeAll()
		case <-prune.C:
			r.prune()
		}
	}
}

// writeAll writes what is buffered, a batch at a time. A batch that fails is counted lost and logged:
// captured steps are a sample for replay, and holding them through a database outage would only grow
// memory the evaluations need.
func (r *Recorder) writeAll() error {
	for {
		r.mu.Lock()
		batch, bytes, _ := r.buf.Take(true, 1, r.cfg.BatchSize, 0) // the oldest BatchSize steps, or fewer
		r.bytes -= bytes
		r.mu.Unlock()
		if batch == nil {
			return nil
		}
		if err := r.write(batch); err != nil {
			return err
		}
	}
}

func (r *Recorder) write(batch []Item) error {
	rows := make([]guard.CapturedStep, 0, len(batch))
	var lost int64
	for _, it := range batch {
		body, err := EncodeStep(it.Step, r.paths)
		if err != nil {
			lost++
			continue
		}
		rows = append(rows, guard.CapturedStep{AgentName: it.Agent, Stage: it.Stage, StepType: it.Step.Type,
			StepName: it.Step.Name, Step: body, Decision: it.Decision, Source: it.Source, Time: it.Time})
	}
	ctx, cancel := context.WithTimeout(context.Background(), defaultWriteTimeout)
	err := r.store.InsertCapturedSteps(ctx, rows)
	cancel()
	r.mu.Lock()
	if err != nil {
		lost += int64(len(rows))
	} else {
		r.stats.Written += int64(len(rows))
	}
	r.stats.Lost += lost
	r.mu.Unlock()
	if err != nil {
		r.cfg.Logger.Error("captured steps lost: the batch could not be written", zap.Int("steps", len(rows)), zap.Error(err))
		return err
	}
	return nil
}

func (r *Recorder) prune() {
	ctx, cancel := context.WithTimeout(context.Background(), defaultWriteTimeout)
	defer cancel()
	n, err := r.store.PruneCapturedSteps(ctx, time.Now().Add(-r.cfg.MaxAge), r.cfg.MaxBytes)
	if err != nil {
		r.cfg.Logger.Warn("captured steps could not be pruned", zap.Error(err))
		return
	}
	r.mu.Lock()
	r.stats.Pruned += n
	r.mu.Unlock()
}

// EncodeStep returns the JSON of step with the values the paths select replaced by "[REDACTED]".
func EncodeStep(step *guard.Step, paths []RedactPath) ([]byte, error) {
	if step == nil {
		return nil, fmt.Errorf("capture: nil step")
	}
	b, err := json.Marshal(step)
	if err != nil || len(paths) == 0 {
		return b, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // numbers keep their exact text
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	if !redact(doc, paths) {
		return b, nil
	}
	return json.Marshal(doc)
}
