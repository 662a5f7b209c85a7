package sqlguard

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	vtlog "vitess.io/vitess/go/vt/log"
)

// TestVitessLogsNoQueryText: a DDL that Vitess parses only in part (it logs "ignoring error parsing DDL
// '<query>'") leaves no trace of the query in Vitess' structured logger nor on standard error.
func TestVitessLogsNoQueryText(t *testing.T) {
	var logged bytes.Buffer
	old := vtlog.SwapLogger(slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { vtlog.SwapLogger(old) })

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	done := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); done <- b }()

	const secret = "secret_column_4af1"
	e := build(t, map[string]any{"blocked_operations": []any{"DROP"}})
	for _, q := range []string{
		"CREATE TABLE t (" + secret + " INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT)",
		"CREATE TABLE t (" + secret + " int) WITH (fillfactor=70)",
	} {
		res := eval(t, e, q)
		if res.Matched { // the partial DDL was accepted: the path that logs
			t.Errorf("%q: %+v", q, res)
		}
	}
	os.Stderr = stderr
	_ = w.Close()
	out := <-done
	for name, text := range map[string]string{"vitess logger": logged.String(), "stderr": string(out)} {
		if strings.Contains(text, secret) {
			t.Errorf("%s holds the query text: %s", name, text)
		}
	}
}
