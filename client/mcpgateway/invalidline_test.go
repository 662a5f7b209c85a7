package mcpgateway

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// TestInvalidLinesSkipped: with InvalidLine set, lines that are not JSON-RPC messages are handed to it and
// skipped, and the messages around them are read; without it the first one ends the connection.
func TestInvalidLinesSkipped(t *testing.T) {
	input := strings.Join([]string{
		`hello from a library`,
		`{"jsonrpc":"2.0","method":"a"}`,
		`[1,2]`,
		`{"jsonrpc":"1.0","method":"b"}`,
		`true`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
	}, "\n") + "\n"
	var skipped []string
	c := newLineConn(strings.NewReader(input), io.Discard, 0, func(line []byte, err error) {
		skipped = append(skipped, string(line))
	}, func() error { return nil })
	var got []string
	for {
		msg, err := c.Read(context.Background())
		if err != nil {
			if err != io.EOF {
				t.Fatalf("read: %v", err)
			}
			break
		}
		switch m := msg.(type) {
		case *jsonrpc.Request:
			got = append(got, "request "+m.Method)
		case *jsonrpc.Response:
			got = append(got, "response")
		}
	}
	if strings.Join(got, ",") != "request a,response" {
		t.Errorf("read %v, want the two messages", got)
	}
	if len(skipped) != 4 || skipped[0] != "hello from a library" {
		t.Errorf("skipped %q, want the four other lines", skipped)
	}

	strict := newLineConn(strings.NewReader(input), io.Discard, 0, nil, func() error { return nil })
	if _, err := strict.Read(context.Background()); err == nil || err == io.EOF {
		t.Errorf("strict read of a stray line: %v, want an error", err)
	}
}

// TestLogInvalidLinesBounded: the first 20 skipped lines are logged, cut to 200 bytes, then one notice, then
// nothing.
func TestLogInvalidLinesBounded(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	f := LogInvalidLines(zap.New(core))
	long := strings.Repeat("é", 300) // 600 bytes
	for i := 0; i < 50; i++ {
		f([]byte(long), io.ErrUnexpectedEOF)
	}
	entries := logs.All()
	if len(entries) != maxLoggedInvalidLines+1 {
		t.Fatalf("%d log entries, want %d", len(entries), maxLoggedInvalidLines+1)
	}
	line := entries[0].ContextMap()["line"].(string)
	if len(line) > maxLoggedInvalidBytes+3 || !strings.HasSuffix(line, "...") || !strings.HasPrefix(line, "éé") {
		t.Errorf("logged line %q (%d bytes), want it cut at a rune boundary", line, len(line))
	}
	if !strings.Contains(entries[maxLoggedInvalidLines].Message, "further ones are skipped") {
		t.Errorf("last entry %q", entries[maxLoggedInvalidLines].Message)
	}
	LogInvalidLines(nil)([]byte("x"), nil) // no logger: nothing, no panic
}
