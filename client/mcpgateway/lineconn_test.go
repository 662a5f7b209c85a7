package mcpgateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// readAll reads messages from c until an error, describing each as "request METHOD ID", "response ID".
func readAll(t *testing.T, c *lineConn) ([]string, error) {
	t.Helper()
	var out []string
	for {
		msg, err := c.Read(context.Background())
		if err != nil {
			return out, err
		}
		out = append(out, describe(msg))
	}
}

func describe(msg jsonrpc.Message) string {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		return fmt.Sprintf("request %s %v %s", m.Method, m.ID.Raw(), m.Params)
	case *jsonrpc.Response:
		if m.Error != nil {
			return fmt.Sprintf("response %v error %v", m.ID.Raw(), m.Error)
		}
		return fmt.Sprintf("response %v %s", m.ID.Raw(), m.Result)
	}
	return fmt.Sprintf("%T", msg)
}

func connOver(input string, maxLine int) *lineConn {
	return newLineConn(strings.NewReader(input), io.Discard, maxLine, nil, func() error { return nil })
}

func TestLineConnFraming(t *testing.T) {
	long := strings.Repeat("x", 100<<10) // longer than the reader's buffer
	cases := []struct {
		name  string
		input string
		want  []string
	}{
		{"one message a line", `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":"a","result":{}}` + "\n",
			[]string{"request ping 1 ", "response a {}"}},
		{"CRLF line ends", `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\r\n",
			[]string{"request notifications/initialized <nil> "}},
		{"blank and space-only lines are skipped", "\n  \n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n\n",
			[]string{"request ping 2 "}},
		{"last line without a newline", `{"jsonrpc":"2.0","id":3,"method":"ping"}`, []string{"request ping 3 "}},
		{"a line longer than the read buffer", `{"jsonrpc":"2.0","id":4,"method":"echo","params":{"t":"` + long + `"}}` + "\n" +
			`{"jsonrpc":"2.0","id":5,"method":"ping"}` + "\n",
			[]string{`request echo 4 {"t":"` + long + `"}`, "request ping 5 "}},
		{"an error response", `{"jsonrpc":"2.0","id":6,"error":{"code":-32601,"message":"no such method"}}` + "\n",
			[]string{"response 6 error no such method"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(t, connOver(tc.input, 0))
			if !errors.Is(err, io.EOF) {
				t.Fatalf("read error %v, want io.EOF after the messages", err)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("read\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// TestLineConnErrors: a malformed line fails the read (the connection then ends), after the good lines
// before it.
func TestLineConnErrors(t *testing.T) {
	ok := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"
	cases := []struct {
		name    string
		input   string
		maxLine int
		want    string // in the error
		tooLong bool
	}{
		{"a line over the limit", ok + `{"jsonrpc":"2.0","id":2,"method":"echo","params":"` + strings.Repeat("y", 200) + `"}` + "\n", 100, "maximum line length", true},
		{"a line over the limit without a newline", ok + strings.Repeat("z", 300), 100, "maximum line length", true},
		{"a long line over a limit above the read buffer", ok + strings.Repeat("w", 200<<10) + "\n", 150 << 10, "maximum line length", true},
		{"not JSON", ok + "hello world\n", 0, "unmarshaling jsonrpc message", false},
		{"two values on a line", ok + `{"jsonrpc":"2.0","id":2,"method":"ping"} {"jsonrpc":"2.0","id":3,"method":"ping"}` + "\n", 0, "unmarshaling jsonrpc message", false},
		{"a JSON value that is not an object", ok + "42\n", 0, "unmarshaling jsonrpc message", false},
		{"wrong version", ok + `{"jsonrpc":"1.0","id":2,"method":"ping"}` + "\n", 0, "version tag", false},
		{"a batch", ok + `[{"jsonrpc":"2.0","id":2,"method":"ping"}]` + "\n", 0, "batches are not supported", false},
		{"a response without an id", ok + `{"jsonrpc":"2.0","result":{}}` + "\n", 0, "without an id", false},
		{"an id that is an object", ok + `{"jsonrpc":"2.0","id":{},"method":"ping"}` + "\n", 0, "invalid ID", false},
		{"a method that is not a string", ok + `{"jsonrpc":"2.0","id":2,"method":7}` + "\n", 0, "unmarshaling jsonrpc message", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(t, connOver(tc.input, tc.maxLine))
			if len(got) != 1 || got[0] != "request ping 1 " {
				t.Fatalf("read %q before the error, want the good line", got)
			}
			if err == nil || errors.Is(err, io.EOF) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if errors.Is(err, ErrLineTooLong) != tc.tooLong {
				t.Fatalf("errors.Is(%v, ErrLineTooLong) = %v", err, !tc.tooLong)
			}
		})
	}
}

// TestDecodeMessageAsTheSDK: the transport's decoder gives what the SDK's does.
func TestDecodeMessageAsTheSDK(t *testing.T) {
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
		`{"jsonrpc":"2.0","id":"abc","method":"tools/list"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`,
		`{"jsonrpc":"2.0","id":12,"method":"","params":{}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x"}]}}`,
		`{"jsonrpc":"2.0","id":"s","error":{"code":-32602,"message":"bad","data":{"why":"x"}}}`,
		`{"jsonrpc":"2.0","id":8,"result":null}`,
		`{"jsonrpc":"2.0","id":9,"method":"ping","params":null}`,
	} {
		want, err := jsonrpc.DecodeMessage([]byte(line))
		if err != nil {
			t.Fatalf("SDK: %v", err)
		}
		got, err := decodeMessage([]byte(line))
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if describe(got) != describe(want) || fmt.Sprintf("%T", got) != fmt.Sprintf("%T", want) {
			t.Errorf("%s:\n got %s\nwant %s", line, describe(got), describe(want))
		}
		if r, ok := want.(*jsonrpc.Request); ok && r.IsCall() != got.(*jsonrpc.Request).IsCall() {
			t.Errorf("%s: IsCall differs", line)
		}
	}
}

// TestLineConnCloseUnblocksRead: Close ends a Read waiting on a stream that never ends (the process's
// stdin cannot be interrupted), and later Reads and Writes fail.
func TestLineConnCloseUnblocksRead(t *testing.T) {
	r, w := io.Pipe()
	defer func() { _ = w.Close() }()
	closed := 0
	c := newLineConn(r, io.Discard, 0, nil, func() error {
		closed++
		return r.Close()
	})
	read := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		read <- err
	}()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-read:
		if !errors.Is(err, io.EOF) {
			t.Fatalf("Read after Close = %v, want io.EOF", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not unblock Read")
	}
	if err := c.Close(); err != nil || closed != 1 {
		t.Fatalf("second Close = %v, streams closed %d times", err, closed)
	}
	if err := c.Write(context.Background(), &jsonrpc.Request{Method: "ping"}); err == nil {
		t.Fatal("Write after Close succeeded")
	}
}

// TestLineConnReadHonoursContext: a Read whose context ends returns its error.
func TestLineConnReadHonoursContext(t *testing.T) {
	r, w := io.Pipe()
	c := newLineConn(r, io.Discard, 0, nil, func() error { return errors.Join(r.Close(), w.Close()) })
	defer func() { _ = c.Close() }()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Read(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Read = %v, want context.Canceled", err)
	}
}

// lockedLines collects what is written, checking that every Write is whole lines.
type lockedLines struct {
	mu     sync.Mutex
	buf    strings.Builder
	writes int
	bad    int
}

func (l *lockedLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	if len(p) == 0 || p[len(p)-1] != '\n' || strings.Count(string(p), "\n") != 1 {
		l.bad++
	}
	l.buf.Write(p)
	return len(p), nil
}

// TestLineConnConcurrentWrites: messages written at once from many goroutines come out one per line,
// each in one write, none lost or interleaved.
func TestLineConnConcurrentWrites(t *testing.T) {
	out := &lockedLines{}
	c := newLineConn(strings.NewReader(""), out, 0, nil, func() error { return nil })
	defer func() { _ = c.Close() }()
	const writers, each = 8, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id, _ := jsonrpc.MakeID(fmt.Sprintf("%d-%d", w, i))
				params := fmt.Sprintf(`{"text":%q}`, strings.Repeat("p", 1000+i))
				if err := c.Write(context.Background(), &jsonrpc.Request{ID: id, Method: "echo", Params: []byte(params)}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if out.writes != writers*each || out.bad != 0 {
		t.Fatalf("%d writes (%d not one whole line), want %d", out.writes, out.bad, writers*each)
	}
	got, err := readAll(t, connOver(out.buf.String(), 0))
	if !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, d := range got {
		seen[strings.Fields(d)[2]] = true
	}
	if len(got) != writers*each || len(seen) != writers*each {
		t.Fatalf("read back %d messages with %d distinct IDs, want %d", len(got), len(seen), writers*each)
	}
}
