package store_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

const writerEnv = "GUARD_STORE_TEST_WRITER_DB"

// TestHelperWriter is not a test: run by TestDurabilityAfterSIGKILL as a subprocess, it creates controls
// forever and prints the id of each one after its commit returned.
func TestHelperWriter(t *testing.T) {
	path := os.Getenv(writerEnv)
	if path == "" {
		return // only meaningful as TestDurabilityAfterSIGKILL's subprocess
	}
	ctx := context.Background()
	s, err := store.Open(ctx, path)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	for i := 0; ; i++ {
		rec, err := s.CreateControl(ctx, "c"+strconv.Itoa(i), testData("x"))
		if err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		if err := s.InsertEvents(ctx, []guard.Event{ev("a", rec.ID, time.Now(), true, guard.DecisionDeny)}); err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		fmt.Println("committed", rec.ID)
	}
}

// TestDurabilityAfterSIGKILL kills a writing process in the middle of its stream of writes, reopens the
// file and finds every control the process reported committed, and an intact database.
func TestDurabilityAfterSIGKILL(t *testing.T) {
	storetest.SkipWithoutSQLite(t)
	path := t.TempDir() + "/guard.db"
	ctx := ctxT(t)
	if err := store.Migrate(ctx, path); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperWriter$", "-test.count=1")
	cmd.Env = append(os.Environ(), writerEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var committed []int64
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "error") {
			t.Fatalf("writer: %s", line)
		}
		if id, ok := strings.CutPrefix(line, "committed "); ok {
			n, err := strconv.ParseInt(id, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			committed = append(committed, n)
			if len(committed) == 300 {
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				break
			}
		}
	}
	// Read what was printed before the kill landed, then reap the process.
	for sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "committed "); ok {
			n, _ := strconv.ParseInt(id, 10, 64)
			committed = append(committed, n)
		}
	}
	_ = cmd.Wait()
	if len(committed) < 300 {
		t.Fatalf("writer stopped after %d commits", len(committed))
	}

	s, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, id := range committed {
		if _, err := s.GetControl(ctx, id); err != nil {
			t.Fatalf("committed control %d lost: %v", id, err)
		}
	}
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check = %q, %v", check, err)
	}
	t.Logf("%d committed controls survived SIGKILL", len(committed))
}
