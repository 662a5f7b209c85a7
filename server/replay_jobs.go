package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
)

// Replays run as jobs off the request goroutine: POST /controls/replay waits up to syncWait (3 s by
// default) and answers 200 with the result when the job is done by then, else 202 and the job's URL.
// Jobs live in memory only (a replay is cheap to run again; a restart forgets them), at most
// maxReplayJobs running at once on the machine's cores, and a finished job is kept replayJobTTL.
const (
	codeReplayBusy        = "REPLAY_BUSY"
	codeReplayUnavailable = "REPLAY_UNAVAILABLE"
	defaultReplaySyncWait = 3 * time.Second
	maxReplayJobs         = 2
	replayJobTTL          = 15 * time.Minute
	replayJobTimeout      = 10 * time.Minute
)

// Job states.
const (
	jobRunning = "running"
	jobDone    = "done"
	jobFailed  = "failed"
)

// replayConfig tunes replay jobs.
type replayConfig struct {
	syncWait time.Duration
	set      bool // syncWait was given (WithReplaySyncWait)
}

// WithReplaySyncWait sets how long POST /controls/replay waits for its job before answering 202
// (default 3 s; zero or less answers 202 at once unless the job is already done).
func WithReplaySyncWait(d time.Duration) Option {
	return func(c *config) { c.replay.syncWait = d; c.replay.set = true }
}

type replayJob struct {
	id        string
	agent     string // the replayed agent, "" for every agent: who may read the job (jobInScope)
	created   time.Time
	total     atomic.Int64
	doneSteps atomic.Int64
	done      chan struct{}
	// set before done is closed
	ended  time.Time
	result *guard.ReplayResult
	err    error
}

type replayJobs struct {
	base context.Context // the server's life: Close cancels the jobs
	// beforeRun, when set (tests), runs on the job's goroutine before the replay: a test holds a job
	// running with it.
	beforeRun func()
	mu        sync.Mutex
	jobs      map[string]*replayJob
	running   int
}

// replayJobView is the wire form of a job.
type replayJobView struct {
	JobID    string              `json:"job_id"`
	Status   string              `json:"status"`
	Progress replayProgress      `json:"progress"`
	Result   *guard.ReplayResult `json:"result,omitempty"`
	Error    *problemDetail      `json:"error,omitempty"`
}

type replayProgress struct {
	StepsTotal int64 `json:"steps_total"`
	StepsDone  int64 `json:"steps_done"`
}

type problemDetail struct {
	Status int    `json:"status"`
	Code   string `json:"error_code"`
	Detail string `json:"detail"`
}

func (s *Server) replays() *replayJobs { return s.jobs }

// start runs plan on a new job, or refuses with 429 when maxReplayJobs are running.
func (js *replayJobs) start(plan *replayPlan, run func(context.Context, *replayPlan, *replayJob) (*guard.ReplayResult, error)) (*replayJob, error) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	job := &replayJob{id: hex.EncodeToString(b[:]), created: time.Now(), done: make(chan struct{}), agent: plan.agent}
	js.mu.Lock()
	js.expireLocked()
	if js.running >= maxReplayJobs {
		js.mu.Unlock()
		pe := problem.New(http.StatusTooManyRequests, codeReplayBusy, "replays are already running; retry when one ends")
		pe.Header = http.Header{"Retry-After": {"5"}}
		return nil, pe
	}
	js.running++
	js.jobs[job.id] = job
	js.mu.Unlock()
	go func() {
		if js.beforeRun != nil {
			js.beforeRun()
		}
		ctx, cancel := context.WithTimeout(js.base, replayJobTimeout)
		res, err := run(ctx, plan, job)
		cancel()
		js.mu.Lock()
		job.result, job.err, job.ended = res, err, time.Now()
		js.running--
		js.mu.Unlock()
		close(job.done)
	}()
	return job, nil
}

func (js *replayJobs) get(id string) *replayJob {
	js.mu.Lock()
	defer js.mu.Unlock()
	js.expireLocked()
	return js.jobs[id]
}

// expireLocked forgets jobs that ended more than replayJobTTL ago.
func (js *replayJobs) expireLocked() {
	for id, j := range js.jobs {
		if !j.ended.IsZero() && time.Since(j.ended) > replayJobTTL {
			delete(js.jobs, id)
		}
	}
}

func (j *replayJob) view() replayJobView {
	v := replayJobView{JobID: j.id, Status: jobRunning,
		Progress: replayProgress{StepsTotal: j.total.Load(), StepsDone: j.doneSteps.Load()}}
	select {
	case <-j.done:
	default:
		return v
	}
	if j.err != nil {
		pe := problem.From(j.err)
		v.Status, v.Error = jobFailed, &problemDetail{Status: pe.Status, Code: pe.Code, Detail: pe.Detail}
		return v
	}
	v.Status, v.Result = jobDone, j.result
	return v
}

func sortControls(cs []guard.ReplayControl) {
	sort.Slice(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if (a.ControlID == nil) != (b.ControlID == nil) {
			return a.ControlID != nil
		}
		if a.ControlID != nil && *a.ControlID != *b.ControlID {
			return *a.ControlID < *b.ControlID
		}
		return a.ControlName < b.ControlName
	})
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
