package pii

import (
	"context"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
)

// equivalenceConfigs are the configs under which the scanner is compared with the reference: every
// entity at min_confidence 0 (every candidate survives), the defaults, single entities, a country subset,
// allow_values and extra context words.
var equivalenceConfigs = []map[string]any{
	{"min_confidence": 0},
	nil,
	{"min_confidence": 0, "entities": []any{"phone"}},
	{"min_confidence": 0, "entities": []any{"us_ssn", "credit_card"}},
	{"min_confidence": 0, "entities": []any{"ip_address"}},
	{"min_confidence": 0, "entities": []any{"iban", "email"}},
	{"min_confidence": 0.4, "countries": []any{"US", "GB"}},
	{"min_confidence": 0.6, "allow_values": []any{"jane@example.com", "192.168.0.1"},
		"context_words": map[string]any{"phone": []any{"zentrale", "ring me"}}},
}

// equivalenceFragments are the pieces random texts are made of: personal data in its formats, near
// misses, the characters that bound or extend a finding, and context words.
var equivalenceFragments = []string{
	"jane@example.com", "a.b@c.de", "x@y", "@", ".", "-", "_", "+", "(", ")", ":", "::", " ", "  ", ",", "/",
	"4111 1111 1111 1111", "4111111111111111", "3782-822463-10005", "5555 5555 5555 4444", "4111 1111 1111 1112",
	"DE89370400440532013000", "GB82 WEST 1234 5698 7654 32", "DE89 3704 0044 0532 0130 00", "NO9386011117947",
	"078-05-1121", "536 22 1234", "536221234", "666-12-3456", "+44 20 7946 0958", "+1 (415) 555-2671",
	"(415) 555-2671", "415-555-2671", "01 23 45 67 89", "0612345678", "+999 1234 5678", "+4420794609",
	"192.168.0.1", "10.0.0.256", "2001:db8::8a2e:370:7334", "fe80::1", "10:30:00", "1.2.3.4.5", "v1.2.3456789",
	"2024-03-05", "129.90", "0", "7", "12", "345", "6789", "a", "Z", "AB", "DE", "fa", "cafe", "call", "phone",
	"card", "iban", "ssn", "social security", "e-mail", "ip", "zentrale", "ring me", "text", "Ticket", "é",
	// Issue 28: groupings, notes after numbers, ports, versions and mail headers.
	"020 7946 0958", "06 12 34 56 78", "044 668 18 00", "90210-1234", "(24h)", " (", "(0)", "09/27", ":3128",
	"1.2.7.1", "5.15.0.91", "\"app_version\": \"", "sdk ", "Message-ID: <", "\n", "REF/7/", ",", "Order ", "ref #", "Ticket:",
}

func randomText(r *rand.Rand) string {
	var b strings.Builder
	for n := r.IntN(40); n >= 0; n-- {
		b.WriteString(equivalenceFragments[r.IntN(len(equivalenceFragments))])
	}
	return b.String()
}

// checkSameAsReference fails when Scan or Evaluate disagree with the reference implementation on text.
func checkSameAsReference(t *testing.T, e *Evaluator, text string) {
	t.Helper()
	got, want := e.Scan(text), refScan(e, text)
	if len(got) != 0 || len(want) != 0 {
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Scan(%q)\n got %+v\nwant %+v", text, got, want)
		}
	}
	d := &evaluator.Data{Value: text, Text: text}
	gotRes, err1 := e.Evaluate(context.Background(), d)
	wantRes, err2 := refEvaluate(context.Background(), e, d)
	if err1 != nil || err2 != nil || !reflect.DeepEqual(gotRes, wantRes) {
		t.Fatalf("Evaluate(%q)\n got %#v %v\nwant %#v %v", text, gotRes, err1, wantRes, err2)
	}
}

// TestScanMatchesReference compares the scanner with the reference on random texts made of personal
// data, near misses and separators, under several configs (seeded: the same texts every run).
func TestScanMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 2026))
	for _, cfg := range equivalenceConfigs {
		e := build(t, cfg)
		checkSameAsReference(t, e, text2KB(true))
		checkSameAsReference(t, e, text2KB(false))
		for range 3000 {
			checkSameAsReference(t, e, randomText(r))
		}
	}
}

// FuzzScanMatchesReference: on any text, the scanner finds exactly what the reference finds.
func FuzzScanMatchesReference(f *testing.F) {
	for _, s := range equivalenceFragments {
		f.Add(s)
	}
	f.Add(text2KB(true))
	var es []*Evaluator
	for _, cfg := range equivalenceConfigs {
		es = append(es, build(f, cfg))
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, e := range es {
			checkSameAsReference(t, e, text)
		}
	})
}
