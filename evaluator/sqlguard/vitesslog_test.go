package sqlguard

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	vtlog "vitess.io/vitess/go/vt/log"
	"vitess.io/vitess/go/vt/sqlparser"
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
	e, err := New(map[string]any{"dialect": "auto"})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TABLE t (" + secret + " INTEGER PRIMARY KEY FOOBAR, name TEXT)",
		"CREATE TABLE t (" + secret + " int) ENGINE = InnoDB SOMETHING ELSE",
	} {
		// Vitess accepts the DDL in part: the path that logs the query.
		st, err := e.parser.Parse(q)
		if ddl, ok := st.(sqlparser.DDLStatement); err != nil || !ok || ddl.IsFullyParsed() {
			t.Fatalf("%q: want a DDL parsed in part, got %T %v", q, st, err)
		}
		eval(t, e, q)
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
