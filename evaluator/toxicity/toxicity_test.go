package toxicity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guardrail-control/guard/evaluator"
)

const (
	testKey  = "sk-test-SECRET-0123456789"
	testText = "you are a PRIVATE-TEXT idiot"
)

// fakeService is an httptest moderation endpoint in the documented format. Each request runs
// respond(n, w, r) with n the 1-based request count.
type fakeService struct {
	calls   atomic.Int32
	srv     *httptest.Server
	respond func(n int, w http.ResponseWriter, r *http.Request)
}

func newService(t testing.TB, respond func(n int, w http.ResponseWriter, r *http.Request)) *fakeService {
	t.Helper()
	f := &fakeService{respond: respond}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.respond(int(f.calls.Add(1)), w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// scores answers 200 with the given category scores.
func scores(w http.ResponseWriter, s map[string]float64) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id":    "modr-1",
		"model": "omni-moderation-test",
		"results": []any{map[string]any{
			"flagged":         false,
			"categories":      map[string]bool{},
			"category_scores": s,
		}},
	})
}

func fullScores(harassment float64) map[string]float64 {
	return map[string]float64{
		"harassment": harassment, "harassment/threatening": 0.01, "hate": 0.02, "hate/threatening": 0.001,
		"self-harm": 0.99, "sexual": 0.99, "sexual/minors": 0.99, "violence": 0.99, "violence/graphic": 0.99,
	}
}

// buildTest registers a factory pointing at url in a fresh registry and builds it with config.
func buildTest(t testing.TB, url string, config map[string]any) evaluator.Evaluator {
	t.Helper()
	r := evaluator.NewRegistry()
	r.Register(NewFactory(Settings{APIKey: testKey, URL: url, Backoff: time.Millisecond}))
	b, err := r.Build(Name, config)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return b.Evaluator
}

func cfg(op string, target float64) map[string]any {
	return map[string]any{"metric": "input_toxicity", "operator": op, "target_value": target}
}

func text(s string) *evaluator.Data { return &evaluator.Data{Value: s, Text: s} }

func TestOperators(t *testing.T) {
	tests := []struct {
		op     string
		score  float64
		target float64
		want   bool
	}{
		{"gt", 0.9, 0.5, true}, {"gt", 0.2, 0.5, false}, {"gt", 0.5, 0.5, false},
		{"gte", 0.9, 0.5, true}, {"gte", 0.2, 0.5, false}, {"gte", 0.5, 0.5, true},
		{"lt", 0.9, 0.5, false}, {"lt", 0.2, 0.5, true}, {"lt", 0.5, 0.5, false},
		{"lte", 0.9, 0.5, false}, {"lte", 0.2, 0.5, true}, {"lte", 0.5, 0.5, true},
		{"eq", 0.9, 0.5, false}, {"eq", 0.2, 0.5, false}, {"eq", 0.5, 0.5, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%v-vs-%v", tt.op, tt.score, tt.target), func(t *testing.T) {
			svc := newService(t, func(_ int, w http.ResponseWriter, _ *http.Request) { scores(w, fullScores(tt.score)) })
			ev := buildTest(t, svc.srv.URL, cfg(tt.op, tt.target))
			res, err := ev.Evaluate(context.Background(), text(testText))
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			if res.Matched != tt.want {
				t.Fatalf("matched = %v, want %v", res.Matched, tt.want)
			}
			if got := res.Metadata["score"]; got != tt.score {
				t.Errorf("metadata score = %v, want %v", got, tt.score)
			}
			if got := res.Metadata["category"]; got != "harassment" {
				t.Errorf("metadata category = %v, want harassment", got)
			}
			if res.Matched && !strings.Contains(res.Message, "input_toxicity") {
				t.Errorf("message %q does not name the metric", res.Message)
			}
			if svc.calls.Load() != 1 {
				t.Errorf("calls = %d, want 1", svc.calls.Load())
			}
		})
	}
}

func TestScoreIsMaxOfToxicityCategories(t *testing.T) {
	tests := []struct {
		name    string
		config  map[string]any
		scores  map[string]float64
		wantTop string
		want    float64
	}{
		{"hate wins", cfg("gt", 0.5), map[string]float64{"harassment": 0.3, "hate": 0.7, "violence": 0.99}, "hate", 0.7},
		{"threatening wins", cfg("gt", 0.5), map[string]float64{"harassment": 0.3, "hate/threatening": 0.8}, "hate/threatening", 0.8},
		{"violence and sexual ignored", cfg("gt", 0.5), map[string]float64{"harassment": 0.1, "sexual": 1, "violence": 1, "self-harm": 1}, "harassment", 0.1},
		{"categories override", map[string]any{"metric": "output_toxicity", "operator": "gt", "target_value": 0.5, "categories": []any{"violence", "hate"}},
			map[string]float64{"harassment": 0.9, "hate": 0.2, "violence": 0.6}, "violence", 0.6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := newService(t, func(_ int, w http.ResponseWriter, _ *http.Request) { scores(w, tt.scores) })
			res, err := buildTest(t, svc.srv.URL, tt.config).Evaluate(context.Background(), text(testText))
			if err != nil {
				t.Fatal(err)
			}
			if res.Metadata["score"] != tt.want || res.Metadata["category"] != tt.wantTop {
				t.Fatalf("score, category = %v, %v; want %v, %v", res.Metadata["score"], res.Metadata["category"], tt.want, tt.wantTop)
			}
			if res.Metadata["metric"] != tt.config["metric"] {
				t.Errorf("metric = %v", res.Metadata["metric"])
			}
		})
	}
}

func TestRequestFormat(t *testing.T) {
	for _, model := range []string{"", "omni-moderation-latest"} {
		t.Run("model="+model, func(t *testing.T) {
			var got map[string]any
			var auth, ctype string
			svc := newService(t, func(_ int, w http.ResponseWriter, r *http.Request) {
				auth, ctype = r.Header.Get("Authorization"), r.Header.Get("Content-Type")
				_ = json.NewDecoder(r.Body).Decode(&got)
				if r.Method != http.MethodPost {
					w.WriteHeader(http.StatusMethodNotAllowed)
					return
				}
				scores(w, fullScores(0.1))
			})
			r := evaluator.NewRegistry()
			r.Register(NewFactory(Settings{APIKey: testKey, URL: svc.srv.URL, Model: model}))
			b, err := r.Build(Name, cfg("gt", 0.5))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.Evaluator.Evaluate(context.Background(), text(testText)); err != nil {
				t.Fatal(err)
			}
			if auth != "Bearer "+testKey || ctype != "application/json" {
				t.Errorf("headers: Authorization %q, Content-Type %q", auth, ctype)
			}
			if got["input"] != testText {
				t.Errorf("input = %v", got["input"])
			}
			if m, ok := got["model"]; (model == "") == ok || (ok && m != model) {
				t.Errorf("model field = %v (present %v), want %q", m, ok, model)
			}
		})
	}
}

func TestStructuredDataSendsStringLeaves(t *testing.T) {
	var got map[string]any
	svc := newService(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		_ = json.NewDecoder(r.Body).Decode(&got)
		scores(w, fullScores(0.1))
	})
	msgs := []any{
		map[string]any{"role": "system", "content": "be nice"},
		map[string]any{"role": "user", "content": "hello", "n": 3.0},
	}
	if _, err := buildTest(t, svc.srv.URL, cfg("gt", 0.5)).Evaluate(context.Background(), &evaluator.Data{Value: msgs, Text: "unused"}); err != nil {
		t.Fatal(err)
	}
	if want := "be nice\nsystem\nhello\nuser"; got["input"] != want {
		t.Fatalf("input = %q, want %q", got["input"], want)
	}
}

func TestNoCallWithoutText(t *testing.T) {
	svc := newService(t, func(_ int, w http.ResponseWriter, _ *http.Request) { scores(w, fullScores(1)) })
	ev := buildTest(t, svc.srv.URL, cfg("lt", 0.5))
	for _, d := range []*evaluator.Data{nil, {}, text(""), text("   "), {Value: 12.0, Text: "12"}, {Value: map[string]any{"a": true}, Text: `{"a":true}`}} {
		res, err := ev.Evaluate(context.Background(), d)
		if err != nil || res.Matched {
			t.Errorf("Evaluate(%+v) = %+v, %v; want no match", d, res, err)
		}
	}
	if n := svc.calls.Load(); n != 0 {
		t.Fatalf("calls = %d, want 0", n)
	}
}

// failure runs one evaluation against respond and returns its error and the request count.
func failure(t *testing.T, config map[string]any, respond func(n int, w http.ResponseWriter, r *http.Request)) (*Error, int) {
	t.Helper()
	svc := newService(t, respond)
	res, err := buildTest(t, svc.srv.URL, config).Evaluate(context.Background(), text(testText))
	if err == nil {
		t.Fatalf("Evaluate = %+v, want an error", res)
	}
	var te *Error
	if !errors.As(err, &te) {
		t.Fatalf("error %T %v is not *Error", err, err)
	}
	for _, secret := range []string{testKey, "PRIVATE-TEXT", "Bearer"} {
		if strings.Contains(err.Error(), secret) {
			t.Fatalf("error %q contains %q", err, secret)
		}
	}
	return te, int(svc.calls.Load())
}

func TestFailures(t *testing.T) {
	tests := []struct {
		name      string
		respond   func(n int, w http.ResponseWriter, r *http.Request)
		status    int
		calls     int
		inMessage string
	}{
		{"401", func(_ int, w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s","type":"invalid_request_error","code":"invalid_api_key"}}`, testKey)
		}, 401, 1, "invalid_api_key"},
		{"401 echoes the key as its code and type", func(_ int, w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = fmt.Fprintf(w, `{"error":{"message":"bad key %[1]s","type":"%[1]s","code":"%[1]s"}}`, testKey)
		}, 401, 1, "401 Unauthorized; check EXT_API_KEY"},
		{"403", func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusForbidden) }, 403, 1, "EXT_API_KEY"},
		{"400 echoes nothing", func(_ int, w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = fmt.Fprintf(w, `{"error":{"message":"bad input %s","type":"invalid_request_error"}}`, testText)
		}, 400, 1, "invalid_request_error"},
		{"500 retried then error", func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) }, 500, 1 + DefaultMaxRetries, "500"},
		{"429 always", func(_ int, w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
		}, 429, 1 + DefaultMaxRetries, "429"},
		{"malformed JSON", func(_ int, w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"results": [`)) }, 200, 1, "malformed"},
		{"wrong shape", func(_ int, w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"results": "PRIVATE-TEXT"}`))
		}, 200, 1, "malformed"},
		{"empty results", func(_ int, w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"id":"x","results":[]}`)) }, 200, 1, "no results"},
		{"no toxicity category", func(_ int, w http.ResponseWriter, _ *http.Request) { scores(w, map[string]float64{"sexual": 0.4}) }, 200, 1, "none of the categories"},
		{"score out of range", func(_ int, w http.ResponseWriter, _ *http.Request) { scores(w, map[string]float64{"hate": 7}) }, 200, 1, "outside"},
		{"too large", func(_ int, w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"id":"` + strings.Repeat("x", MaxResponseBytes) + `"}`))
		}, 200, 1, "larger"},
		{"redirect not followed", func(_ int, w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Location", "http://127.0.0.1:1/steal")
			w.WriteHeader(http.StatusTemporaryRedirect)
		}, 307, 1, "307"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			te, calls := failure(t, cfg("gt", 0.5), tt.respond)
			if te.StatusCode != tt.status || calls != tt.calls {
				t.Errorf("status %d after %d calls, want %d after %d", te.StatusCode, calls, tt.status, tt.calls)
			}
			if !strings.Contains(te.Error(), tt.inMessage) {
				t.Errorf("error %q does not mention %q", te, tt.inMessage)
			}
		})
	}
}

func TestRetryThenSuccess(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusBadGateway} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			svc := newService(t, func(n int, w http.ResponseWriter, _ *http.Request) {
				if n == 1 {
					w.Header().Set("Retry-After", "0")
					w.WriteHeader(status)
					return
				}
				scores(w, fullScores(0.9))
			})
			res, err := buildTest(t, svc.srv.URL, cfg("gt", 0.5)).Evaluate(context.Background(), text(testText))
			if err != nil || !res.Matched {
				t.Fatalf("Evaluate = %+v, %v; want a match", res, err)
			}
			if n := svc.calls.Load(); n != 2 {
				t.Fatalf("calls = %d, want 2", n)
			}
		})
	}
}

func TestRetryAfterBeyondDeadlineGivesUp(t *testing.T) {
	config := cfg("gt", 0.5)
	config["timeout_ms"] = 2000
	start := time.Now()
	te, calls := failure(t, config, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	if calls != 1 || te.StatusCode != 429 {
		t.Fatalf("status %d after %d calls, want 429 after 1", te.StatusCode, calls)
	}
	if el := time.Since(start); el > time.Second {
		t.Fatalf("gave up after %v, want at once", el)
	}
}

func TestSlowerThanTimeout(t *testing.T) {
	const timeout = 200 * time.Millisecond
	release := make(chan struct{})
	defer close(release)
	config := cfg("gt", 0.5)
	config["timeout_ms"] = int(timeout / time.Millisecond)
	start := time.Now()
	te, calls := failure(t, config, func(_ int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	elapsed := time.Since(start)
	if elapsed > timeout+2*time.Second {
		t.Fatalf("returned after %v, want about %v", elapsed, timeout)
	}
	if !errors.Is(te, context.DeadlineExceeded) || calls != 1 {
		t.Fatalf("error %v after %d calls, want a deadline error after 1", te, calls)
	}
}

func TestCallerDeadlineIsRespected(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	svc := newService(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	ev := buildTest(t, svc.srv.URL, cfg("gt", 0.5)) // default timeout 10 s
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := ev.Evaluate(ctx, text(testText))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("returned after %v", el)
	}
}

func TestNetworkErrorHidesKeyAndURL(t *testing.T) {
	svc := newService(t, nil)
	url := svc.srv.URL + "/v1/moderations?api_key=" + testKey
	svc.srv.Close() // connection refused from now on
	r := evaluator.NewRegistry()
	r.Register(NewFactory(Settings{APIKey: testKey, URL: url, MaxRetries: -1}))
	b, err := r.Build(Name, cfg("gt", 0.5))
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Evaluator.Evaluate(context.Background(), text(testText))
	if err == nil || strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), "api_key") {
		t.Fatalf("err = %v", err)
	}
}
