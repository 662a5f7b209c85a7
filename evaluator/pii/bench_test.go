package pii

import (
	"context"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
	"github.com/guardrail-control/guard/evaluator/internal/benchcpu"
)

// text2KB is about 2 KB of support-chat output with numbers that are not personal data (dates, times,
// amounts, versions) and, in the "with" variant, an e-mail address and a phone number.
func text2KB(withPII bool) string {
	para := "Ticket 4821 was opened on 2024-03-05 at 09:41 and closed after 3 replies. The refund of 129.90 EUR " +
		"was approved by the team, version 2.14.1 of the app fixes the crash reported on build 5531. "
	if withPII {
		para += "Contact jane.doe@example.com or call +44 20 7946 0958 for follow-up. "
	}
	var b strings.Builder
	for b.Len() < 2048 {
		b.WriteString(para)
	}
	return b.String()[:2048]
}

func benchEval(b *testing.B, text string) {
	e := build(b, nil)
	d := &evaluator.Data{Value: text, Text: text}
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	stop := benchcpu.Start(b)
	for i := 0; i < b.N; i++ {
		if _, err := e.Evaluate(ctx, d); err != nil {
			b.Fatal(err)
		}
	}
	stop()
}

// BenchmarkPII2KBClean: all entities on 2 KB with numbers but no personal data.
func BenchmarkPII2KBClean(b *testing.B) { benchEval(b, text2KB(false)) }

// BenchmarkPII2KBWithPII: all entities on 2 KB holding e-mail addresses and phone numbers.
func BenchmarkPII2KBWithPII(b *testing.B) { benchEval(b, text2KB(true)) }
