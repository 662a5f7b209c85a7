package evaluator

import "context"

// Span is a piece of a text an evaluator found: the bytes text[Start:End] and what they are. Type names
// the finding for a redaction's replacement: the pii entity type, the secrets rule id, "regex", "list".
type Span struct {
	Start, End int
	Type       string
}

// Spanner is implemented by evaluators that can say where in a text they found what they match: the
// engine asks them for the spans to redact when a control with action.redact matched (see the control
// language's redaction). Spans returns the spans of d.Text, sorted by Start, with 0 <= Start < End <=
// len(d.Text); they may overlap. They are what the evaluator finds in that text, whatever the options that
// only shape its verdict on the whole value (list logic all reports each value found, even when not all
// are): the engine asks only once the control matched. An error means the spans could not all be found (a
// match timeout, ctx done, too many); the engine then redacts the whole text.
type Spanner interface {
	Spans(ctx context.Context, d *Data) ([]Span, error)
}

// SpanEvaluator is implemented by evaluators that can find their spans in the evaluation itself, so that
// a redacting control's leaf is searched once: the engine calls EvaluateSpans instead of Evaluate only
// for the leaves that can redact (those of a control with action.redact, outside any not, selecting a
// string of the stage's payload); every other leaf keeps calling Evaluate and pays nothing for it.
//
// EvaluateSpans returns the Result and error Evaluate would return for d, and, when the error is nil,
// what Spans would return for d in Found (whatever the verdict: list logic all reports each value found
// even when not all are). An evaluator that implements it should implement Spanner too: the engine still
// asks Spans for the leaves it did not evaluate (an or stops at its first match) and for values that
// are not strings (each string inside is searched on its own).
type SpanEvaluator interface {
	EvaluateSpans(ctx context.Context, d *Data) (Result, Found, error)
}

// Found is what an evaluation found in d.Text for redaction: Spans as Spanner.Spans returns them, or Err
// when they could not all be found (the verdict stands; the engine then redacts the whole text).
type Found struct {
	Spans []Span
	Err   error
}
