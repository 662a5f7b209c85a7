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
// len(d.Text); they may overlap. A text the evaluator would not match has no spans, except that spans are
// reported whatever the evaluator's verdict-level options (list logic all, min counts...): the engine only
// asks once the control matched. An error means the spans could not be found (a match timeout, ctx done).
type Spanner interface {
	Spans(ctx context.Context, d *Data) ([]Span, error)
}
