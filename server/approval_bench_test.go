package server

import (
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
)

// BenchmarkGrantCheck is what checking a presented grant costs before the database: the payload hash of
// the step (RFC 8785 + SHA-256), the grant's signature and expiry, and its bindings. The target is 5 us.
func BenchmarkGrantCheck(b *testing.B) {
	key := []byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	step := &guard.Step{Type: "tool", Name: "refund", Input: map[string]any{"order": "A-17", "amount": 2500.0, "currency": "EUR",
		"reason": "the parcel never arrived", "customer": map[string]any{"id": "c-981", "tier": "gold"}}}
	hash, err := guard.PayloadHash(step, guard.StagePre)
	if err != nil {
		b.Fatal(err)
	}
	exp := time.Now().Add(time.Hour)
	tok := signGrant(key, &guard.ApprovalRecord{ID: "5b0c8a52-4f8e-4b7e-9d6a-0f3b1a2c3d4e", AgentName: "support-bot", ControlID: 7,
		ControlVersion: 3, StepType: "tool", StepName: "refund", Stage: guard.StagePre, PayloadHash: hash, GrantExpiresAt: &exp})
	set := []guard.ApprovalControl{{ControlID: 7}}
	b.ReportAllocs()
	now := time.Now()
	for b.Loop() {
		h, err := guard.PayloadHash(step, guard.StagePre)
		if err != nil {
			b.Fatal(err)
		}
		g, err := parseGrant(tok)
		if err != nil {
			b.Fatal(err)
		}
		if ok, err := g.verify(key, "support-bot", set, step, guard.StagePre, h, now); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
