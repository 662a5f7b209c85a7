package mcpgateway

import (
	"fmt"
	"io"
	"mime"
	"net/http"
)

// MaxResponseBytes bounds one JSON response of an upstream MCP server over Streamable HTTP, as
// MaxLineLength (mcp.DefaultMaxLineLength, 16 MiB) bounds one message over stdio.
const MaxResponseBytes = 16 << 20

// BoundedHTTPClient returns an HTTP client for mcp.StreamableClientTransport whose responses are read in
// bounded memory: the SDK reads a JSON response whole (io.ReadAll), so a hostile or broken upstream that
// sends an endless body would grow the gateway without end. A body past max bytes (MaxResponseBytes when
// max <= 0) fails its read with an error naming the cap, which fails the call. Event streams
// (text/event-stream) are left alone: the SDK bounds each event (16 MiB) and a stream lives long. base nil
// means http.DefaultClient's settings.
func BoundedHTTPClient(base *http.Client, max int64) *http.Client {
	if max <= 0 {
		max = MaxResponseBytes
	}
	c := &http.Client{}
	if base != nil {
		*c = *base
	}
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.Transport = boundedTransport{rt: rt, max: max}
	return c
}

type boundedTransport struct {
	rt  http.RoundTripper
	max int64
}

func (t boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		return resp, nil
	}
	resp.Body = &boundedBody{rc: resp.Body, left: t.max, max: t.max}
	return resp, nil
}

// boundedBody reads at most max bytes of rc, then fails.
type boundedBody struct {
	rc   io.ReadCloser
	left int64
	max  int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly max bytes from a longer one.
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n == 0 {
			return 0, io.EOF
		}
		return 0, fmt.Errorf("mcp: upstream response larger than %d bytes (the gateway's cap)", b.max)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *boundedBody) Close() error { return b.rc.Close() }
