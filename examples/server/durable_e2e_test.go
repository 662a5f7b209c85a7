package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/guardrail-control/guard/store/storetest"
)

// The durable-mode end-to-end test runs the real server binary: with OBSERVABILITY_DURABLE=true every
// event that got a 201 is in the database, so a SIGKILL right after the last answer loses none of them.
// The same posts in the default mode (202, buffered) are lost by the same SIGKILL, which shows the test
// can tell the two apart.

func TestDurableEventsSurviveKill9(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		durableKillTest(t, "sqlite://"+filepath.Join(t.TempDir(), "guard.db"))
	})
	t.Run("postgres", func(t *testing.T) { durableKillTest(t, storetest.PostgresURL(t)) })
}

func durableKillTest(t *testing.T, dbURL string) {
	start := func(durable bool) *proc {
		return startServer(t, map[string]string{"GUARD_API_KEY_ENABLED": "false", "DATABASE_URL": dbURL,
			"OBSERVABILITY_ENABLED": "true", "OBSERVABILITY_FLUSH_INTERVAL_SECONDS": "3600",
			"OBSERVABILITY_DURABLE": fmt.Sprint(durable)}, "serve", "--migrate")
	}
	post := func(p *proc, agent string, batches int, want int) map[string]bool {
		sent := map[string]bool{}
		for b := range batches {
			events := make([]map[string]any, 100)
			for i := range events {
				id := uuid.NewString()
				sent[id] = true
				events[i] = map[string]any{
					"control_execution_id": id, "agent_name": agent, "control_id": 1 + i%4, "control_name": "c",
					"check_stage": "pre", "step_type": "llm", "step_name": "chat", "action": "deny", "matched": true,
					"confidence": 0.5, "execution_duration_ms": 1.25, "metadata": map[string]any{"batch": b},
					"timestamp": time.Now().UTC().Format(time.RFC3339Nano), "source": "sdk",
				}
			}
			var got struct{ Received, Stored int }
			p.callInto(want, http.MethodPost, "/api/v1/observability/events", map[string]any{"events": events}, &got)
			if got.Received != 100 || want == http.StatusCreated && got.Stored != 100 {
				t.Fatalf("answer = %+v", got)
			}
		}
		return sent
	}
	kill := func(p *proc) {
		if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if !p.exitedWithin(60 * time.Second) {
			t.Fatal("no exit after SIGKILL")
		}
	}

	p := start(true)
	durable := post(p, "durable-agent", 10, http.StatusCreated)
	kill(p) // right after the last 201

	p = start(false)
	buffered := post(p, "buffered-agent", 3, http.StatusAccepted) // under one batch: nothing written yet
	kill(p)

	p = start(false)
	ids, q := p.queryAll(map[string]any{"agent_name": "durable-agent"})
	if q.Total != len(durable) {
		t.Fatalf("after SIGKILL the store holds %d of the %d events answered 201", q.Total, len(durable))
	}
	for id := range durable {
		if !ids[id] {
			t.Fatalf("event %s got a 201 but is not stored", id)
		}
	}
	_, bq := p.queryAll(map[string]any{"agent_name": "buffered-agent"})
	if bq.Total >= len(buffered) {
		t.Fatalf("the %d buffered events all survived SIGKILL: the test cannot tell durable from buffered", bq.Total)
	}
	t.Logf("durable: %d of %d events answered 201 survived SIGKILL; buffered: %d of %d answered 202 were lost",
		q.Total, len(durable), len(buffered)-bq.Total, len(buffered))
	p.stop()
}
