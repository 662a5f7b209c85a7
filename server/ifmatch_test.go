package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

func TestControlETagAndIfMatch(t *testing.T) {
	ts := newTS(t)
	id := ts.createControl("etag", regexData("a", "deny"))
	path := fmt.Sprintf("/api/v1/controls/%d", id)

	get := ts.do("GET", path, nil)
	if get.Code != 200 || get.Header.Get("ETag") != `"1"` {
		t.Fatalf("GET: %d ETag %q", get.Code, get.Header.Get("ETag"))
	}
	cases := []struct {
		name    string
		method  string
		suffix  string
		body    any
		ifMatch string // "" sends no header
		status  int
		etag    string // the ETag of the answer: the new version, or the current one on 412
	}{
		{"put data, current tag", "PUT", "/data", map[string]any{"data": regexData("b", "deny")}, `"1"`, 200, `"2"`},
		{"put data, stale tag", "PUT", "/data", map[string]any{"data": regexData("c", "deny")}, `"1"`, 412, `"2"`},
		{"patch, stale tag", "PATCH", "", map[string]any{"enabled": false}, `"1"`, 412, `"2"`},
		{"patch, weak tag never matches", "PATCH", "", map[string]any{"enabled": false}, `W/"2"`, 412, ""},
		{"patch, garbage", "PATCH", "", map[string]any{"enabled": false}, `2`, 412, ""},
		{"patch, list with the current tag", "PATCH", "", map[string]any{"enabled": false}, `"1", "2"`, 200, `"3"`},
		{"patch, star", "PATCH", "", map[string]any{"enabled": true}, `*`, 200, `"4"`},
		{"put data, no header", "PUT", "/data", map[string]any{"data": regexData("d", "deny")}, "", 200, `"5"`},
		{"invalid data beats a stale tag: 422", "PUT", "/data", map[string]any{"data": map[string]any{}}, `"1"`, 422, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var hdr []string
			if c.ifMatch != "" {
				hdr = []string{"If-Match", c.ifMatch}
			}
			r := ts.do(c.method, path+c.suffix, c.body, hdr...)
			if r.Code != c.status {
				t.Fatalf("status %d, want %d: %s", r.Code, c.status, r.Body)
			}
			if c.status == 412 {
				if b := r.problem(t); b.ErrorCode != "PRECONDITION_FAILED" {
					t.Fatalf("error_code %s", b.ErrorCode)
				}
			}
			if c.etag != "" && r.Header.Get("ETag") != c.etag {
				t.Fatalf("ETag %q, want %q", r.Header.Get("ETag"), c.etag)
			}
		})
	}
	if m := ts.ok(200, "GET", path, nil); m["version"].(float64) != 5 {
		t.Fatalf("version %v, want 5 (refused writes changed nothing)", m["version"])
	}
	ts.expectProblem(404, "CONTROL_NOT_FOUND", "PUT", "/api/v1/controls/999999/data", map[string]any{"data": regexData("x", "deny")}, "If-Match", `"1"`)
	ts.expectProblem(412, "PRECONDITION_FAILED", "DELETE", path+"?force=true", nil, "If-Match", `"4"`)
	ts.ok(200, "GET", path, nil)
	ts.ok(200, "DELETE", path+"?force=true", nil, "If-Match", `"5"`)
	ts.expectProblem(404, "CONTROL_NOT_FOUND", "GET", path, nil)
}

// Two writers read the same version over HTTP and write at once with If-Match: exactly one wins, the other
// gets 412 and the control holds the winner's data.
func TestIfMatchConcurrentWriters(t *testing.T) {
	ts := newTS(t)
	hs := httptest.NewServer(ts.srv)
	defer hs.Close()
	id := ts.createControl("race", regexData("start", "deny"))
	url := fmt.Sprintf("%s/api/v1/controls/%d", hs.URL, id)

	for round := 0; round < 10; round++ {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		tag := resp.Header.Get("ETag")
		resp.Body.Close()
		var wg sync.WaitGroup
		status := make([]int, 2)
		for i := range status {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body, _ := json.Marshal(map[string]any{"data": regexData(fmt.Sprintf("writer-%d-%d", round, i), "deny")})
				req, _ := http.NewRequest("PUT", url+"/data", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("If-Match", tag)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				status[i] = resp.StatusCode
			}()
		}
		wg.Wait()
		ok, stale := 0, 0
		for _, s := range status {
			switch s {
			case 200:
				ok++
			case 412:
				stale++
			}
		}
		if ok != 1 || stale != 1 {
			t.Fatalf("round %d: statuses %v, want one 200 and one 412", round, status)
		}
	}
	if m := ts.ok(200, "GET", fmt.Sprintf("/api/v1/controls/%d", id), nil); m["version"].(float64) != 11 {
		t.Fatalf("version %v, want 11: one write per round", m["version"])
	}
}
