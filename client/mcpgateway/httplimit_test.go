package mcpgateway_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/client/mcpgateway"
)

// TestBoundedHTTPClient: issue 23. The SDK reads an upstream's JSON response whole; an upstream that sends
// an endless body now fails the read at the cap, having sent at most the cap plus one byte; a body of
// exactly the cap and an event stream of any length are read.
func TestBoundedHTTPClient(t *testing.T) {
	const max = 1 << 16
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/endless":
			w.Header().Set("Content-Type", "application/json")
			buf := []byte(strings.Repeat(" ", 4096))
			for {
				if _, err := w.Write(buf); err != nil {
					return // the client gave up
				}
			}
		case "/exact":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(strings.Repeat(" ", max)))
		case "/events":
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte(strings.Repeat("data: x\n\n", 2*max/9)))
		}
	}))
	defer srv.Close()
	c := mcpgateway.BoundedHTTPClient(srv.Client(), max)
	for _, tc := range []struct {
		path string
		n    int
		err  string
	}{
		{"/endless", max, "larger than 65536 bytes"},
		{"/exact", max, ""},
		{"/events", 2 * max / 9 * 9, ""},
	} {
		resp, err := c.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if len(b) != tc.n || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: %d bytes, err %v; want %d, %q", tc.path, len(b), err, tc.n, tc.err)
		}
	}
}
