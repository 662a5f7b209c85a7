package templates_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/guardrail-control/guard/internal/costtext"
)

// TestCostProbe prints one evaluation's CPU time (the process's) per template, kind and size (best of 3), skipping the
// larger sizes of a row once one takes more than GUARD_COST_PROBE_CAP (default 2s). Set GUARD_COST_PROBE=1.
func TestCostProbe(t *testing.T) {
	if os.Getenv("GUARD_COST_PROBE") == "" {
		t.Skip("set GUARD_COST_PROBE=1 to print the cost table")
	}
	capT := 2 * time.Second
	if v, err := time.ParseDuration(os.Getenv("GUARD_COST_PROBE_CAP")); err == nil {
		capT = v
	}
	only := os.Getenv("GUARD_COST_PROBE_ONLY")
	var out strings.Builder
	for _, name := range textTemplates {
		if only != "" && !strings.Contains(","+only+",", ","+name+",") {
			continue
		}
		c := newCostCase(t, name)
		for _, kind := range []string{costtext.Ordinary, costtext.Triggers, costtext.Attack} {
			fmt.Fprintf(&out, "| %s | %s |", name, kind)
			skip := false
			for _, n := range costtext.Sizes {
				if skip {
					out.WriteString(" |")
					continue
				}
				step := c.step(c.text(kind, n))
				best := time.Duration(1 << 62)
				matched := false
				for i := 0; i < 3; i++ {
					start := processCPU()
					res, err := c.eng.Evaluate(context.Background(), step, c.stage)
					if err != nil {
						t.Fatal(err)
					}
					best = min(best, processCPU()-start)
					matched = len(res.Matches) > 0
					if best > capT {
						break
					}
				}
				m := ""
				if matched {
					m = "*"
				}
				fmt.Fprintf(&out, " %s%s |", fmtDur(best), m)
				skip = best > capT
			}
			out.WriteString("\n")
		}
	}
	t.Log("\n" + out.String())
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
	default:
		return fmt.Sprintf("%d µs", d.Microseconds())
	}
}
