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
