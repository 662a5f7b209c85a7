package llmproxy_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/llmproxy"
	"github.com/guardrail-control/guard/llmproxy/fakellm"
)

// benchControls are ten controls for the latency benchmarks: the seven of the tests and three more
// regex controls on every llm step.
func benchChecker(b *testing.B) *engineChecker {
	var cs []guard.Control
	all := append([]struct{ name, data string }{}, testControls...)
	for i, p := range []string{"(?i)drop table", "(?i)rm -rf", "(?i)password"} {
		all = append(all, struct{ name, data string }{fmt.Sprint("extra-", i), `{"scope": {"step_types": ["llm"]},
			"condition": {"selector": {"path": "input"}, "evaluator": {"name": "regex", "config": {"pattern": "` + p + `"}}},
			"action": {"decision": "deny"}}`})
	}
	for i, c := range all {
		d, err := guard.ParseControlData([]byte(c.data))
		if err != nil {
			b.Fatal(err)
		}
		cs = append(cs, guard.Control{ID: int64(i + 1), Name: c.name, Data: d})
	}
	eng := guard.New()
	if err := eng.Update(cs); err != nil {
		b.Fatal(err)
	}
	if len(cs) != 10 {
		b.Fatalf("%d controls", len(cs))
	}
	return &engineChecker{eng: eng}
}

// quietChecker is an engineChecker that keeps no record of the steps (benchmarks).
type quietChecker struct{ eng *guard.Engine }

func (c quietChecker) Check(r *http.Request, _ string, step *guard.Step, stage guard.Stage) (*guard.Result, error) {
	return c.eng.Evaluate(r.Context(), step, stage)
}

func benchRig(b *testing.B, fake *fakellm.Server) string {
	return benchRigWith(b, fake, benchChecker(b).eng)
}

func benchRigWith(b *testing.B, fake *fakellm.Server, eng *guard.Engine) string {
	p, err := llmproxy.New(llmproxy.Config{OpenAIBaseURL: fake.BaseURL(), Checker: quietChecker{eng}, DefaultAgent: "bot"})
	if err != nil {
		b.Fatal(err)
	}
	srv := newLoopback(b, p)
	return srv
}

func post(b *testing.B, hc *http.Client, url string, body []byte) []byte {
	r, err := hc.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	out, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 200 {
		b.Fatalf("%d %s", r.StatusCode, out)
	}
	return out
}

func percentiles(b *testing.B, d []time.Duration) {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	b.ReportMetric(float64(d[len(d)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(d[len(d)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkChat: one non-streamed chat completion (a 1 KB conversation, a short answer), direct to the
// fake upstream, through the proxy with ten controls (two steps each: the messages, the answer) and
// through the proxy with no control (its own cost without the engine's). The added latency is the
// difference of the medians.
func BenchmarkChat(b *testing.B) {
	fake := fakellm.New()
	defer fake.Close()
	fake.Script(func(*fakellm.Request) fakellm.Reply {
		return fakellm.Reply{Text: "Sure, here is the summary you asked for."}
	})
	body := []byte(`{"model":"m","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"` +
		strings.Repeat("please summarise this text. ", 36) + `"}]}`)
	for _, via := range []string{"direct", "proxy", "proxy-no-controls"} {
		b.Run(via, func(b *testing.B) {
			url := fake.BaseURL() + "/chat/completions"
			switch via {
			case "proxy":
				url = benchRig(b, fake) + "/v1/chat/completions"
			case "proxy-no-controls":
				url = benchRigWith(b, fake, guard.New()) + "/v1/chat/completions"
			}
			hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			post(b, hc, url, body)
			d := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				post(b, hc, url, body)
				d = append(d, time.Since(t0))
			}
			percentiles(b, d)
		})
	}
}

// BenchmarkChatStream: a streamed 4 KB answer (16-byte deltas), direct and through the proxy (1024-byte
// windows): the time to the first content byte and to the end.
func BenchmarkChatStream(b *testing.B) {
	fake := fakellm.New()
	defer fake.Close()
	answer := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 92)[:4096]
	fake.Script(func(*fakellm.Request) fakellm.Reply { return fakellm.Reply{Text: answer, Chunk: 16} })
	body := []byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"write"}]}`)
	for _, via := range []string{"direct", "proxy"} {
		b.Run(via, func(b *testing.B) {
			url := fake.BaseURL() + "/chat/completions"
			if via == "proxy" {
				url = benchRig(b, fake) + "/v1/chat/completions"
			}
			hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			first := make([]time.Duration, 0, b.N)
			total := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				r, err := hc.Post(url, "application/json", bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				br := bufio.NewReader(r.Body)
				got := false
				for {
					ln, err := br.ReadString('\n')
					if err != nil {
						break
					}
					if !got && strings.Contains(ln, `"content":"`) && !strings.Contains(ln, `"content":""`) {
						first = append(first, time.Since(t0))
						got = true
					}
				}
				r.Body.Close()
				total = append(total, time.Since(t0))
			}
			sort.Slice(first, func(i, j int) bool { return first[i] < first[j] })
			b.ReportMetric(float64(first[len(first)/2].Microseconds()), "first-byte-p50-µs")
			percentiles(b, total)
		})
	}
}

// BenchmarkOpenStreams: the heap of 1,000 streams held open at once (each has released its first window
// and waits for the model), direct and through the proxy; the difference per stream is the proxy's.
func BenchmarkOpenStreams(b *testing.B) {
	const n = 1000
	for _, via := range []string{"direct", "proxy"} {
		b.Run(via, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				fake := fakellm.New()
				release := make(chan struct{})
				fake.Script(func(*fakellm.Request) fakellm.Reply {
					return fakellm.Reply{Text: strings.Repeat("word ", 300), Chunk: 1500, Wait: release}
				})
				url := fake.BaseURL() + "/chat/completions"
				if via == "proxy" {
					url = benchRig(b, fake) + "/v1/chat/completions"
				}
				hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: 0}}
				body := []byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"write"}]}`)
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				var ready, done sync.WaitGroup
				ready.Add(n)
				done.Add(n)
				ctx, cancel := context.WithCancel(context.Background())
				for j := 0; j < n; j++ {
					go func() {
						defer done.Done()
						req, _ := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(body))
						r, err := hc.Do(req)
						if err != nil {
							ready.Done()
							return
						}
						br := bufio.NewReader(r.Body)
						for {
							ln, err := br.ReadString('\n')
							if err != nil || strings.Contains(ln, "word") {
								break
							}
						}
						ready.Done()
						_, _ = io.Copy(io.Discard, r.Body)
						r.Body.Close()
					}()
				}
				ready.Wait()
				runtime.GC()
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/n, "heap-B/stream")
				close(release)
				cancel()
				done.Wait()
				fake.Close()
			}
		})
	}
}
