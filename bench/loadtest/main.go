// Command loadtest measures POST /api/v1/evaluation under concurrent load on the loopback interface and
// compares it with a bare net/http handler that decodes the same request JSON and encodes the same
// response JSON, so the ratio shows the cost of the server itself (routing, middleware, auth, the engine
// cache and the evaluation).
//
//	go run ./bench/loadtest                      # in-process server over a temporary SQLite file
//	go run ./bench/loadtest -postgres 'postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable'
//	go run ./bench/loadtest -target http://127.0.0.1:8000 -api-key KEY
//	go run ./bench/loadtest -sessions 10000 -redis redis://127.0.0.1:6379/0 -d 10s   # sessions.go
//
// With no -target it starts the real server (package server over store, metrics and event recording on,
// as examples/server runs it) on 127.0.0.1 with a free port; with -postgres it stores in a new database
// created on that server for the run and dropped after it. It creates an agent with 10 controls through
// the API, then runs -c connections for -d against each handler (after a short warm-up) and prints
// requests/s, p50 and p99 latency for both and the ratio.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server"
	"github.com/guardrail-control/guard/server/observability"
	"github.com/guardrail-control/guard/store"
)

func main() {
	var (
		target   = flag.String("target", "", "base URL of a running server (default: start one in-process)")
		apiKey   = flag.String("api-key", "", "X-API-Key for -target (an admin key: the set-up creates controls)")
		conns    = flag.Int("c", 32, "concurrent connections")
		duration = flag.Duration("d", 10*time.Second, "measurement duration per handler (at most 2m)")
		warmup   = flag.Duration("warmup", time.Second, "warm-up before each measurement")
		obs      = flag.Bool("observability", true, "in-process server: record observability events as the default configuration does")
		cpuprof  = flag.String("cpuprofile", "", "write a CPU profile of the whole run (server and load) to this file")
		pgURL    = flag.String("postgres", "", "in-process server: store in a fresh database on this PostgreSQL server instead of SQLite")
		slices   = flag.Int("slices", 1, "measure guard and bare alternately in this many slices of -d/slices each (on a shared machine the load then drifts equally over both)")
		sessions = flag.Int("sessions", 0, "sessions mode: this many live sessions, 2 server processes sharing -redis against 1 (sessions.go)")
		redisURL = flag.String("redis", "", "sessions mode: the Redis both replicas share (GUARD_SESSION_STORE)")
		bin      = flag.String("server-bin", "", "sessions mode: the server binary (default: go build ./examples/server)")
		rounds   = flag.Int("rounds", 2, "sessions mode: alternations of single and 2 replicas")
	)
	flag.Parse()
	if *cpuprof != "" {
		f, err := os.Create(*cpuprof)
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadtest:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "loadtest:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if *duration <= 0 || *duration > 2*time.Minute || *conns < 1 || *conns > 1024 || *slices < 1 || *slices > 100 {
		fmt.Fprintln(os.Stderr, "loadtest: -d must be in (0, 2m], -c in [1, 1024] and -slices in [1, 100]")
		os.Exit(2)
	}
	if *sessions > 0 {
		if *redisURL == "" {
			fmt.Fprintln(os.Stderr, "loadtest:", errNoRedis)
			os.Exit(2)
		}
		if *sessions > 10_000_000 || *rounds < 1 || *rounds > 20 {
			fmt.Fprintln(os.Stderr, "loadtest: -sessions must be at most 10,000,000 and -rounds in [1, 20]")
			os.Exit(2)
		}
		err := runSessions(sessionsConfig{sessions: *sessions, redisURL: *redisURL, serverBin: *bin, pgURL: *pgURL,
			conns: *conns, d: *duration, warm: *warmup, rounds: *rounds, obs: *obs})
		if err != nil {
			pprof.StopCPUProfile()
			fmt.Fprintln(os.Stderr, "loadtest:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*target, *apiKey, *pgURL, *conns, *slices, *duration, *warmup, *obs); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

const agentName = "loadtest-agent"

// requestBody is the evaluation request every worker sends.
var requestBody = []byte(`{"agent_name":"` + agentName + `","stage":"pre","step":{"type":"llm","name":"chat",` +
	`"input":"Please summarise the quarterly report for the team and list the three main risks.","context":{"user":"u-1"}}}`)

func run(target, apiKey, pgURL string, conns, slices int, d, warm time.Duration, obs bool) error {
	ctx := context.Background()
	var recStats func() (observability.RecorderStats, bool)
	if target == "" {
		base, stop, st, err := startServer(ctx, pgURL, obs)
		if err != nil {
			return err
		}
		defer stop()
		target = base
		recStats = st
	}
	client := newClient(conns)
	sample, err := setup(client, target, apiKey)
	if err != nil {
		return fmt.Errorf("set-up through the API: %w", err)
	}
	bare, stopBare, err := startBare(sample)
	if err != nil {
		return err
	}
	defer stopBare()

	fmt.Printf("loadtest: %d connections, %v per handler in %d alternating slices (after %v warm-up), GOMAXPROCS=%d\n", conns, d, slices, warm, runtime.GOMAXPROCS(0))
	var srv, br result
	for i := range slices {
		if i > 0 {
			warm = 0 // the connections and the engine are warm
		}
		srv.add(measure(client, target+"/api/v1/evaluation", apiKey, conns, d/time.Duration(slices), warm))
		br.add(measure(client, bare+"/api/v1/evaluation", "", conns, d/time.Duration(slices), warm))
	}
	srv.finish()
	br.finish()
	if recStats != nil {
		if st, ok := recStats(); ok {
			fmt.Printf("events: %d received, %d written, %d dropped, %d pending\n", st.Received, st.Written, st.Dropped, st.Pending)
		}
	}
	fmt.Printf("%-12s %10s %10s %10s %8s\n", "handler", "req/s", "p50", "p99", "errors")
	for _, r := range []struct {
		name string
		res  result
	}{{"guard", srv}, {"bare", br}} {
		fmt.Printf("%-12s %10.0f %10v %10v %8d\n", r.name, r.res.rps, r.res.p50.Round(time.Microsecond), r.res.p99.Round(time.Microsecond), r.res.errors)
	}
	if br.rps > 0 {
		fmt.Printf("guard / bare throughput: %.0f%%\n", 100*srv.rps/br.rps)
	}
	if srv.errors > 0 {
		return fmt.Errorf("%d requests to the server failed", srv.errors)
	}
	return nil
}

// startServer runs the real server over a temporary SQLite file, or a new database on the PostgreSQL
// server of pgURL, on a free loopback port.
// The returned function reports the recorder's counters (false when event recording is off).
func startServer(ctx context.Context, pgURL string, obs bool) (string, func(), func() (observability.RecorderStats, bool), error) {
	dir, err := os.MkdirTemp("", "guard-loadtest")
	if err != nil {
		return "", nil, nil, err
	}
	dbURL, dropDB := filepath.Join(dir, "guard.db"), func() {}
	if pgURL != "" {
		if dbURL, dropDB, err = createPostgresDB(ctx, pgURL); err != nil {
			os.RemoveAll(dir)
			return "", nil, nil, err
		}
	}
	st, err := store.OpenAndMigrate(ctx, dbURL)
	if err != nil {
		dropDB()
		os.RemoveAll(dir)
		return "", nil, nil, err
	}
	metrics, err := observability.NewMetrics("guard")
	if err != nil {
		return "", nil, nil, err
	}
	var rec *observability.Recorder
	if obs {
		rec = observability.NewRecorder(st, observability.RecorderConfig{Metrics: metrics})
	}
	srv, err := server.New(st, server.WithMetrics(metrics), server.WithObservability(obs, rec))
	if err != nil {
		return "", nil, nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, nil, err
	}
	stats := func() (observability.RecorderStats, bool) {
		if rec == nil {
			return observability.RecorderStats{}, false
		}
		return rec.Stats(), true
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	stop := func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
		srv.Close()
		if rec != nil {
			_ = rec.Close(sctx)
		}
		st.Close()
		dropDB()
		os.RemoveAll(dir)
	}
	return "http://" + ln.Addr().String(), stop, stats, nil
}

// createPostgresDB creates a database with a random name on the server of base and returns its URL and
// a function that drops it.
func createPostgresDB(ctx context.Context, base string) (string, func(), error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, fmt.Errorf("-postgres is not a URL: %w", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "guard_loadtest_" + hex.EncodeToString(b[:])
	admin, err := sql.Open("postgres", base)
	if err != nil {
		return "", nil, err
	}
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE `+name); err != nil {
		admin.Close()
		return "", nil, fmt.Errorf("create database: %w", err)
	}
	drop := func() {
		defer admin.Close()
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(dctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
			fmt.Fprintln(os.Stderr, "loadtest: drop database", name+":", err)
		}
	}
	u.Path = "/" + name
	return u.String(), drop, nil
}

// startBare serves a handler that decodes the evaluation request and encodes sample, the response the
// real server gave for it: the same JSON work without the server.
func startBare(sample *guard.Result) (string, func(), error) {
	type request struct {
		AgentName string      `json:"agent_name"`
		Step      *guard.Step `json:"step"`
		Stage     string      `json:"stage"`
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req request
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(sample)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = hs.Close() }, nil
}

func newClient(conns int) *http.Client {
	tr := &http.Transport{
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// apiCaller returns a function that sends one API request to base (with key when not empty) and returns
// the answer's body, an error unless the status is want.
func apiCaller(c *http.Client, base, key string) func(method, path string, body any, want int) ([]byte, error) {
	return func(method, path string, body any, want int) ([]byte, error) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, base+path, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("X-API-Key", key)
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			return nil, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, out)
		}
		return out, nil
	}
}

// setup creates 10 controls (5 regex deny, 5 list warn), an agent and the links; it returns the
// evaluation response for requestBody.
func setup(c *http.Client, base, key string) (*guard.Result, error) {
	call := apiCaller(c, base, key)
	if _, err := call("POST", "/api/v1/agents/initAgent", map[string]any{
		"agent": map[string]any{"agent_name": agentName}, "conflict_mode": "overwrite",
		"steps": []any{map[string]any{"type": "llm", "name": "chat"}},
	}, 200); err != nil {
		return nil, err
	}
	if err := setupControls(call, agentName); err != nil {
		return nil, err
	}
	var body any
	_ = json.Unmarshal(requestBody, &body)
	out, err := call("POST", "/api/v1/evaluation", body, 200)
	if err != nil {
		return nil, err
	}
	var res guard.Result
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// setupControls creates 10 controls linked to agent: 5 regex deny, 5 list warn, none matching the
// requests of the load.
func setupControls(call func(method, path string, body any, want int) ([]byte, error), agent string) error {
	suffix := time.Now().UnixNano()
	for i := 0; i < 10; i++ {
		var cond map[string]any
		decision := "deny"
		if i%2 == 0 {
			cond = map[string]any{"selector": map[string]any{"path": "input"},
				"evaluator": map[string]any{"name": "regex", "config": map[string]any{"pattern": fmt.Sprintf(`\bforbidden%d\b`, i)}}}
		} else {
			decision = "warn"
			cond = map[string]any{"selector": map[string]any{"path": "input"},
				"evaluator": map[string]any{"name": "list", "config": map[string]any{"values": []string{fmt.Sprintf("banned%d", i), "other"}, "match_mode": "contains"}}}
		}
		data := map[string]any{"condition": cond, "action": map[string]any{"decision": decision}}
		if err := createAndLink(call, agent, fmt.Sprintf("loadtest-%d-%d", suffix, i), data); err != nil {
			return err
		}
	}
	return nil
}

// createAndLink creates a control (PUT /controls answers 200) and links it to agent.
func createAndLink(call func(method, path string, body any, want int) ([]byte, error), agent, name string, data map[string]any) error {
	out, err := call("PUT", "/api/v1/controls", map[string]any{"name": name, "data": data}, 200)
	if err != nil {
		return err
	}
	var created struct {
		ControlID int64 `json:"control_id"`
	}
	if err := json.Unmarshal(out, &created); err != nil {
		return err
	}
	_, err = call("POST", fmt.Sprintf("/api/v1/agents/%s/controls/%d", agent, created.ControlID), nil, 200)
	return err
}

type result struct {
	rps      float64
	p50, p99 time.Duration
	errors   int64
	// lat and elapsed are the latencies and the time of every slice (add), until finish computes the
	// figures above from them.
	lat     []time.Duration
	elapsed time.Duration
}

// add appends the latencies, time and errors of one slice.
func (r *result) add(s result) {
	r.lat = append(r.lat, s.lat...)
	r.elapsed += s.elapsed
	r.errors += s.errors
}

// finish computes requests/s, p50 and p99 over every slice added.
func (r *result) finish() {
	sort.Slice(r.lat, func(i, j int) bool { return r.lat[i] < r.lat[j] })
	if r.elapsed > 0 {
		r.rps = float64(len(r.lat)) / r.elapsed.Seconds()
	}
	if len(r.lat) > 0 {
		r.p50 = r.lat[len(r.lat)*50/100]
		r.p99 = r.lat[len(r.lat)*99/100]
	}
}

// measure runs conns workers against url: a warm-up, then d of recorded requests; add and finish turn
// what it returns into figures.
func measure(c *http.Client, url, key string, conns int, d, warm time.Duration) result {
	var (
		recording atomic.Bool
		stop      atomic.Bool
		errs      atomic.Int64
		wg        sync.WaitGroup
		lat       = make([][]time.Duration, conns)
	)
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			local := make([]time.Duration, 0, 1<<16)
			for !stop.Load() {
				req, _ := http.NewRequest("POST", url, bytes.NewReader(requestBody))
				req.Header.Set("Content-Type", "application/json")
				if key != "" {
					req.Header.Set("X-API-Key", key)
				}
				t0 := time.Now()
				resp, err := c.Do(req)
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				el := time.Since(t0)
				if !recording.Load() {
					continue
				}
				if err != nil || resp.StatusCode != 200 {
					errs.Add(1)
					continue
				}
				local = append(local, el)
			}
			lat[i] = local
		}(i)
	}
	elapsed := measureWindow(warm, d, &recording, &stop, &wg)
	r := result{errors: errs.Load(), elapsed: elapsed}
	for _, l := range lat {
		r.lat = append(r.lat, l...)
	}
	return r
}

// measureWindow lets the workers warm up for warm, records their latencies for d, then stops them and waits
// for them to finish; it returns how long the recording window really lasted.
func measureWindow(warm, d time.Duration, recording, stop *atomic.Bool, wg *sync.WaitGroup) time.Duration {
	time.Sleep(warm)
	recording.Store(true)
	start := time.Now()
	time.Sleep(d)
	recording.Store(false)
	elapsed := time.Since(start)
	stop.Store(true)
	wg.Wait()
	return elapsed
}
