package main

// The sessions mode (-sessions N, issue 24): replicas of the server binary sharing session state through
// one Redis, against N live sessions. Two server processes (examples/server) over one database and one
// Redis key prefix are started on 127.0.0.1; the load is sent alternately to one of them alone ("single")
// and to both ("2 replicas", each request to either at random, so that a session's steps hop between
// replicas as behind a load balancer without affinity), in -rounds alternations, and the p99 of each is
// compared. Redis's own counters (INFO commandstats) give the scripts it ran per evaluation: the round trips
// of the session store (one per evaluation, a second one when a replica's cache was stale).
//
// On a machine with fewer cores than replicas plus load generator, two replicas measure the cost of
// coordinating through Redis (stale replica caches, version conflicts), not scale-out.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// sessionsAgent is the agent of the sessions mode.
const sessionsAgent = "loadtest-sessions"

// sessionTools are the step names of the sessions mode: the rule of two labels three of them, the tool
// loop counts every one.
var sessionTools = []string{"fetch_page", "read_file", "http_post", "search", "summarize"}

type sessionsConfig struct {
	sessions  int
	redisURL  string
	serverBin string
	pgURL     string
	conns     int
	d, warm   time.Duration
	rounds    int
	obs       bool
}

// replicaProc is one server process.
type replicaProc struct {
	cmd    *exec.Cmd
	url    string
	exited chan struct{}
}

func runSessions(cfg sessionsConfig) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "guard-loadtest-sessions")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := cfg.serverBin
	if bin == "" {
		bin = filepath.Join(dir, "guard-server")
		fmt.Println("loadtest: building the server binary (examples/server)")
		if out, err := exec.Command("go", "build", "-o", bin, "github.com/guardrail-control/guard/examples/server").CombinedOutput(); err != nil {
			return fmt.Errorf("go build: %v\n%s", err, out)
		}
	}
	dbURL, dropDB := filepath.Join(dir, "guard.db"), func() {}
	if cfg.pgURL != "" {
		if dbURL, dropDB, err = createPostgresDB(ctx, cfg.pgURL); err != nil {
			return err
		}
	}
	defer dropDB()
	opt, err := redis.ParseURL(cfg.redisURL)
	if err != nil {
		return fmt.Errorf("-redis: %w", err)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("-redis %s: %w", cfg.redisURL, err)
	}
	prefix := fmt.Sprintf("guardload:%d:%d:", os.Getpid(), time.Now().UnixNano())
	defer deleteKeys(rdb, prefix)

	env := []string{"HOST=127.0.0.1", "PORT=0", "GUARD_API_KEY_ENABLED=false", "DATABASE_URL=" + dbURL, "DB_URL=",
		"GUARD_SESSION_STORE=" + cfg.redisURL, "GUARD_SESSION_PREFIX=" + prefix, "OBSERVABILITY_ENABLED=" + strconv.FormatBool(cfg.obs)}
	a, err := startReplica(bin, dir, "a", env, "serve", "--migrate")
	if err != nil {
		return err
	}
	defer a.stop()
	b, err := startReplica(bin, dir, "b", env)
	if err != nil {
		return err
	}
	defer b.stop()

	client := newClient(2 * cfg.conns)
	if err := setupSessions(client, a.url); err != nil {
		return fmt.Errorf("set-up through the API: %w", err)
	}
	// Every session gets its first step, through either replica: N live sessions in Redis.
	fmt.Printf("loadtest: %d sessions, %d connections, %v per configuration and round, %d rounds, observability %v, replicas on %s and %s\n",
		cfg.sessions, cfg.conns, cfg.d, cfg.rounds, cfg.obs, a.url, b.url)
	t0 := time.Now()
	if err := populate(client, []string{a.url, b.url}, cfg.sessions, cfg.conns); err != nil {
		return err
	}
	live, _ := countKeys(rdb, prefix+"{"+sessionsAgent+"}:s:*")
	fmt.Printf("populated in %v: %d live sessions in Redis\n", time.Since(t0).Round(time.Millisecond), live)

	fmt.Printf("%-6s %-11s %9s %10s %10s %8s %7s %10s %s\n", "round", "config", "req/s", "p50", "p99", "errors", "denied", "scripts/ev", "load average (before → after)")
	var single, pair []time.Duration
	for r := 1; r <= cfg.rounds; r++ {
		for _, c := range []struct {
			name    string
			targets []string
			p99s    *[]time.Duration
		}{{"single", []string{a.url}, &single}, {"2 replicas", []string{a.url, b.url}, &pair}} {
			before, cmds0 := loadAvg(), redisRoundTrips(ctx, rdb)
			res, denied := measureSessions(client, c.targets, cfg.sessions, cfg.conns, cfg.d, cfg.warm)
			cmds1 := redisRoundTrips(ctx, rdb)
			res.finish()
			perEval := "-"
			if n := len(res.lat); n > 0 && cmds0 >= 0 && cmds1 >= 0 {
				// Counted over the warm-up too (Redis cannot tell them apart): the ratio uses every request.
				perEval = fmt.Sprintf("%.2f", float64(cmds1-cmds0)/float64(res.sent))
			}
			fmt.Printf("%-6d %-11s %9.0f %10v %10v %8d %7d %10s %s → %s\n", r, c.name, res.rps, res.p50.Round(time.Microsecond),
				res.p99.Round(time.Microsecond), res.errors, denied, perEval, before, loadAvg())
			*c.p99s = append(*c.p99s, res.p99)
			if res.errors > 0 {
				return fmt.Errorf("%s: %d requests failed", c.name, res.errors)
			}
		}
	}
	live, _ = countKeys(rdb, prefix+"{"+sessionsAgent+"}:s:*")
	ms, mp := median(single), median(pair)
	fmt.Printf("live sessions at the end: %d\n", live)
	fmt.Printf("median p99: single %v, 2 replicas %v: 2 replicas / single = %.2fx (target ≤ 1.5x)\n",
		ms.Round(time.Microsecond), mp.Round(time.Microsecond), float64(mp)/float64(ms))
	return nil
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// startReplica starts the server binary with env and waits for its "listening on" line.
func startReplica(bin, dir, name string, env []string, args ...string) (*replicaProc, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &replicaProc{cmd: cmd, exited: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				addr <- a
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() { _ = cmd.Wait(); logf.Close(); close(p.exited) }()
	select {
	case a := <-addr:
		p.url = a
		if !strings.Contains(a, "://") {
			p.url = "http://" + a
		}
		return p, nil
	case <-p.exited:
		log, _ := os.ReadFile(filepath.Join(dir, name+".log"))
		return nil, fmt.Errorf("replica %s exited at start:\n%s", name, log)
	case <-time.After(60 * time.Second):
		p.stop()
		return nil, fmt.Errorf("replica %s did not listen within 60s", name)
	}
}

// stop asks the process to shut down (SIGINT) and kills it if it has not within 10 s.
func (p *replicaProc) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// setupSessions creates the agent with the 10 controls of the default mode (setupControls) plus the
// rule-of-two and tool-loop templates, rendered by the server.
func setupSessions(c *http.Client, base string) error {
	call := apiCaller(c, base, "")
	if _, err := call("POST", "/api/v1/agents/initAgent", map[string]any{
		"agent": map[string]any{"agent_name": sessionsAgent}, "conflict_mode": "overwrite",
		"steps": []any{map[string]any{"type": "tool", "name": "fetch_page"}},
	}, 200); err != nil {
		return err
	}
	if err := setupControls(call, sessionsAgent); err != nil {
		return err
	}
	suffix := time.Now().UnixNano()
	for _, t := range []struct {
		name   string
		params map[string]any
	}{
		{"rule-of-two", map[string]any{"untrusted_steps": []string{"fetch_page"}, "sensitive_steps": []string{"read_file"}, "egress_steps": []string{"http_post"}}},
		{"tool-loop", map[string]any{"max_calls": 20, "window": "60s"}},
	} {
		out, err := call("POST", "/api/v1/control-templates/"+t.name+"/render", map[string]any{"parameters": t.params}, 200)
		if err != nil {
			return err
		}
		var rendered struct {
			Data map[string]any `json:"control_data"`
		}
		if err := json.Unmarshal(out, &rendered); err != nil {
			return err
		}
		if err := createAndLink(call, sessionsAgent, fmt.Sprintf("loadtest-%s-%d", t.name, suffix), rendered.Data); err != nil {
			return err
		}
	}
	return nil
}

// sessionBody is the evaluation request of one step of session s.
func sessionBody(buf []byte, s int, tool string) []byte {
	buf = append(buf[:0], `{"agent_name":"`+sessionsAgent+`","stage":"pre","step":{"type":"tool","name":"`...)
	buf = append(buf, tool...)
	buf = append(buf, `","input":{"query":"quarterly report risks"},"context":{"session_id":"s-`...)
	buf = strconv.AppendInt(buf, int64(s), 10)
	return append(buf, `"}}}`...)
}

// populate sends the first step of every session (fetch_page), spread over the targets.
func populate(c *http.Client, targets []string, n, conns int) error {
	var next atomic.Int64
	var failed atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < conns; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for {
				s := int(next.Add(1)) - 1
				if s >= n {
					return
				}
				buf = sessionBody(buf, s, "fetch_page")
				if _, err := post(c, targets[s%len(targets)]+"/api/v1/evaluation", buf); err != nil {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if f := failed.Load(); f > 0 {
		return fmt.Errorf("populating the sessions: %d steps failed", f)
	}
	return nil
}

// post sends one evaluation and returns the response body (an error unless 200).
func post(c *http.Client, url string, body []byte) ([]byte, error) {
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != 200 {
		err = fmt.Errorf("status %d: %.200s", resp.StatusCode, out)
	}
	return out, err
}

// sessionsResult is a result with the number of requests sent (warm-up included).
type sessionsResult struct {
	result
	sent int64
}

// measureSessions runs conns workers for warm + d, each request a step of a random session (a random
// tool) sent to a random target; it returns the latencies of the recorded part and the denied steps.
func measureSessions(c *http.Client, targets []string, sessions, conns int, d, warm time.Duration) (sessionsResult, int64) {
	var (
		recording, stop atomic.Bool
		errs, denied    atomic.Int64
		sent            atomic.Int64
		wg              sync.WaitGroup
		lat             = make([][]time.Duration, conns)
		firstErr        atomic.Value
	)
	denyMark := []byte(`"decision":"deny"`)
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))
			local := make([]time.Duration, 0, 1<<15)
			var buf []byte
			for !stop.Load() {
				buf = sessionBody(buf, rng.IntN(sessions), sessionTools[rng.IntN(len(sessionTools))])
				url := targets[rng.IntN(len(targets))] + "/api/v1/evaluation"
				t0 := time.Now()
				out, err := post(c, url, buf)
				el := time.Since(t0)
				sent.Add(1)
				if !recording.Load() {
					continue
				}
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				if bytes.Contains(out, denyMark) {
					denied.Add(1)
				}
				local = append(local, el)
			}
			lat[i] = local
		}(i)
	}
	elapsed := measureWindow(warm, d, &recording, &stop, &wg)
	if e := firstErr.Load(); e != nil {
		fmt.Fprintln(os.Stderr, "loadtest: first error:", e)
	}
	r := sessionsResult{result: result{errors: errs.Load(), elapsed: elapsed}, sent: sent.Load()}
	for _, l := range lat {
		r.lat = append(r.lat, l...)
	}
	return r, denied.Load()
}

// redisRoundTrips is the number of scripts Redis ran (EVALSHA and EVAL calls, from INFO commandstats): a
// session store's round trip per commit. Server-wide: other clients of the same Redis count too. -1 when
// it cannot be read.
func redisRoundTrips(ctx context.Context, rdb *redis.Client) int64 {
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return -1
	}
	var n int64
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		for _, cmd := range []string{"cmdstat_evalsha:calls=", "cmdstat_eval:calls="} {
			if v, ok := strings.CutPrefix(line, cmd); ok {
				v, _, _ = strings.Cut(v, ",")
				c, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return -1
				}
				n += c
			}
		}
	}
	return n
}

// countKeys counts the keys matching pattern (SCAN: the keys of this run only).
func countKeys(rdb *redis.Client, pattern string) (int, error) {
	ctx := context.Background()
	n := 0
	iter := rdb.Scan(ctx, 0, pattern, 5000).Iterator()
	for iter.Next(ctx) {
		n++
	}
	return n, iter.Err()
}

// deleteKeys removes the run's keys.
func deleteKeys(rdb *redis.Client, prefix string) {
	ctx := context.Background()
	iter := rdb.Scan(ctx, 0, prefix+"*", 5000).Iterator()
	var batch []string
	for iter.Next(ctx) {
		if batch = append(batch, iter.Val()); len(batch) == 1000 {
			rdb.Del(ctx, batch...)
			batch = batch[:0]
		}
	}
	if len(batch) > 0 {
		rdb.Del(ctx, batch...)
	}
}

// loadAvg is the 1-minute load average of the machine ("?" where /proc/loadavg is not readable).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

var errNoRedis = errors.New("-sessions needs -redis (a Redis URL such as redis://127.0.0.1:6379/0)")
