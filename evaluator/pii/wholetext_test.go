package pii

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
)

// TestNumbersAfterWordsAndEscapes: issue 23's audit. A word holding a digit ("ref42", "A1") made the
// scanner skip everything after it that spaces joined, hiding a card or an SSN later in the sentence; and
// in the JSON text of structured data an escaped newline or tab ("\n4111...") glued its letter to the
// number. Both are found now, at the offsets of the text.
func TestNumbersAfterWordsAndEscapes(t *testing.T) {
	e, err := New(map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		value any
		typ   string
	}{
		{"ref42 card 4111 1111 1111 1111", CreditCard},
		{"order A1 ssn 078-05-1121", USSSN},
		{"v1.2.3 build x9 then 078-05-1121", USSSN},
		{map[string]any{"note": "card\n4111 1111 1111 1111"}, CreditCard},
		{map[string]any{"note": "ssn:\t078-05-1121"}, USSSN},
		{map[string]any{"note": "iban\nDE89370400440532013000"}, IBAN},
		{map[string]any{"note": "host\n10.1.2.3"}, IPAddress},
		{[]any{"x\u0001078-05-1121"}, USSSN},
	} {
		text, _ := tc.value.(string)
		if text == "" {
			b, _ := json.Marshal(tc.value)
			text = string(b)
		}
		d := &evaluator.Data{Value: tc.value, Text: text}
		res, err := e.Evaluate(context.Background(), d)
		if err != nil || !res.Matched {
			t.Errorf("%q: not found (%v)", text, err)
			continue
		}
		_, found, _ := e.EvaluateSpans(context.Background(), d)
		ok := false
		for _, sp := range found.Spans {
			if sp.Type == tc.typ && sp.End <= len(text) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("%q: spans %+v, want a %s", text, found.Spans, tc.typ)
		}
	}
}
