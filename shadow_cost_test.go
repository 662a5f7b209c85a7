package guard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/guardrail-control/guard"
)

// shadowCopies returns n enabled shadow copies of a deny control whose "contains" evaluator counts its
// calls under key and matches input containing needle.
func shadowCopies(n int, firstID int64, needle, key string) []guard.Control {
	out := make([]guard.Control, n)
	for i := range out {
		c := ctl(firstID+int64(i), guard.DecisionDeny, leaf("input", "contains", map[string]any{"needle": needle, "key": key}))
		c.Name = fmt.Sprintf("shadow-%d", i)
		c.Data.Mode = guard.ModeShadow
		out[i] = c
	}
	return out
}

// TestCheckSkipsShadowControls: the decision path never runs a shadow control's evaluator (Check,
// Evaluate and Applies skip them, they are not merely left out of the answer), EvaluateShadow runs each
// of them, and Check allocates the same with shadow controls as without: their cost is paid only by
// EvaluateShadow, and only when they exist.
func TestCheckSkipsShadowControls(t *testing.T) {
	const skey, ekey = "shadow-cost-shadow", "shadow-cost-enforced"
	enforced := ctl(1, guard.DecisionDeny, leaf("input", "contains", map[string]any{"needle": "drop", "key": ekey}))
	plain := newEngine(t, enforced)
	withShadow := newEngine(t, append([]guard.Control{enforced}, shadowCopies(10, 100, "secret", skey)...)...)
	if plain.HasShadow() || !withShadow.HasShadow() {
		t.Fatalf("HasShadow: %v without shadow controls, %v with", plain.HasShadow(), withShadow.HasShadow())
	}
	ctx := context.Background()
	step := &guard.Step{Type: "llm", Name: "chat", Input: "a secret, then drop it"}
	before := calls(skey)
	if err := withShadow.Check(ctx, step, guard.StagePre); err == nil {
		t.Fatal("Check allowed: the enforced control must deny")
	}
	if res, err := withShadow.Evaluate(ctx, step, guard.StagePre); err != nil || len(res.Matches) != 1 {
		t.Fatalf("Evaluate = %+v, %v", res, err)
	}
	if !withShadow.Applies(step, guard.StagePre) {
		t.Fatal("Applies = false")
	}
	if n := calls(skey) - before; n != 0 {
		t.Fatalf("the decision path ran shadow evaluators %d times", n)
	}
	sh, err := withShadow.EvaluateShadow(ctx, step, guard.StagePre)
	if err != nil || sh == nil || len(sh.Matches) != 10 {
		t.Fatalf("EvaluateShadow = %+v, %v", sh, err)
	}
	if n := calls(skey) - before; n != 10 {
		t.Fatalf("EvaluateShadow ran shadow evaluators %d times, want 10", n)
	}
	if raceEnabled {
		return
	}
	allocs := func(e *guard.Engine) float64 {
		return testing.AllocsPerRun(200, func() { _ = e.Check(ctx, step, guard.StagePre) })
	}
	if a, b := allocs(plain), allocs(withShadow); a != b {
		t.Errorf("Check allocates %v per call with shadow controls, %v without", b, a)
	}
}

// BenchmarkCheckShadow: Check on the 100-control bench engine, alone and with 100 shadow controls added
// (which Check must skip), and EvaluateShadow on each (nil at one pointer load when there are none).
func BenchmarkCheckShadow(b *testing.B) {
	ctx := context.Background()
	step := &guard.Step{Type: "llm", Name: "chat", Input: "nothing any control looks for"}
	for _, n := range []int{0, 100} {
		controls := benchControls(100, false)
		for i, c := range benchControls(n, false) {
			c.ID, c.Name = int64(10_000+i), fmt.Sprintf("shadow-%d", i)
			c.Data.Mode = guard.ModeShadow
			controls = append(controls, c)
		}
		e := guard.New()
		if err := e.Update(controls); err != nil {
			b.Fatal(err)
		}
		if e.HasShadow() != (n > 0) {
			b.Fatalf("HasShadow = %v with %d shadow controls", e.HasShadow(), n)
		}
		b.Run(fmt.Sprintf("Check/shadow=%d", n), func(b *testing.B) {
			loop(b, func() {
				if err := e.Check(ctx, step, guard.StagePre); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run(fmt.Sprintf("EvaluateShadow/shadow=%d", n), func(b *testing.B) {
			loop(b, func() {
				if _, err := e.EvaluateShadow(ctx, step, guard.StagePre); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
