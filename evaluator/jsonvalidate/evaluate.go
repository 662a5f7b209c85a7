package jsonvalidate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/guardrail-control/guard/evaluator"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// Evaluate matches when d violates the configured rules. String data is parsed as JSON first; text that
// is not JSON is a match unless allow_invalid_json is set. Null data never matches. The returned error
// is always nil: every outcome is a decision.
// errDuplicateKey: the text holds a key twice in one object (duplicateKey).
var errDuplicateKey = errors.New("a key appears twice in one object")

func (e *Evaluator) Evaluate(_ context.Context, d *evaluator.Data) (evaluator.Result, error) {
	if d == nil || d.IsNull() {
		return evaluator.Result{Confidence: 1}, nil
	}
	v := d.Value
	if s, ok := v.(string); ok {
		parsed, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
		if err == nil && duplicateKey(s) {
			err = errDuplicateKey
		}
		if err != nil {
			if e.allowInvalid {
				return evaluator.Result{Confidence: 1, Metadata: map[string]any{"invalid_json": true}}, nil
			}
			return evaluator.Result{Matched: true, Confidence: 1, Message: "data is not valid JSON",
				Metadata: map[string]any{"invalid_json": true}}, nil
		}
		v = parsed
	}
	vs := e.check(v)
	if vs == nil {
		return evaluator.Result{Confidence: 1}, nil
	}
	listed := make([]any, 0, min(len(vs), maxListed))
	for _, v := range vs[:min(len(vs), maxListed)] {
		listed = append(listed, map[string]any{"field": v.Field, "keyword": v.Keyword})
	}
	return evaluator.Result{
		Matched:    true,
		Confidence: 1,
		Message:    describe(vs),
		Metadata:   map[string]any{"violations": listed, "violation_count": len(vs)},
	}, nil
}

// check validates v against every compiled schema and returns the violations, nil when there are none.
// A value holding Go types that are not JSON (structs, typed maps, given by an in-process caller) is
// converted through encoding/json and checked again.
func (e *Evaluator) check(v any) []Violation {
	out, invalid := e.validate(v)
	if invalid || (e.ref.active && !isDecodedJSON(v)) {
		if norm, ok := normalize(v); ok {
			out, _ = e.validate(norm)
			v = norm
		}
	}
	if more := e.ref.check(v); len(more) > 0 {
		out = append(out, more...)
		sortViolations(out)
		out = dedupe(out)
	}
	return out
}

// isDecodedJSON reports whether v holds only what encoding/json decodes into (the reference checks
// compare float64 numbers and map[string]any objects).
func isDecodedJSON(v any) bool {
	switch x := v.(type) {
	case nil, string, float64, bool, json.Number:
		return true
	case map[string]any:
		for _, c := range x {
			if !isDecodedJSON(c) {
				return false
			}
		}
		return true
	case []any:
		for _, c := range x {
			if !isDecodedJSON(c) {
				return false
			}
		}
		return true
	}
	return false
}

// validate runs the schemas on v; invalid reports a value that is not decoded JSON.
func (e *Evaluator) validate(v any) (out []Violation, invalid bool) {
	for _, sch := range e.schemas {
		err := sch.Validate(v)
		if err == nil {
			continue
		}
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			out = append(out, Violation{"", "invalid"})
			continue
		}
		invalid = invalid || hasInvalidValue(ve)
		out = append(out, collect(ve)...)
	}
	if len(e.schemas) > 1 && len(out) > 1 {
		sortViolations(out)
		out = dedupe(out)
	}
	return out, invalid
}

// hasInvalidValue reports whether validation met a Go value that is not decoded JSON.
func hasInvalidValue(ve *jsonschema.ValidationError) bool {
	if _, ok := ve.ErrorKind.(*kind.InvalidJsonValue); ok {
		return true
	}
	for _, c := range ve.Causes {
		if hasInvalidValue(c) {
			return true
		}
	}
	return false
}

// normalize round-trips v through encoding/json; ok is false when v cannot be encoded.
func normalize(v any) (any, bool) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	return out, err == nil
}
