// Package jsonvalidate provides the "json" evaluator: it checks structured data (tool arguments,
// structured LLM outputs) against a JSON Schema and MATCHES WHEN THE DATA VIOLATES IT, so that a deny
// control blocks a tool call with bad arguments.
//
// Importing the package registers the evaluator in evaluator.Default:
//
//	import _ "github.com/guardrail-control/guard/evaluator/jsonvalidate"
//
// Config (at least one of the first four):
//
//	schema              a JSON Schema object (draft 2020-12 unless it says "$schema"); it may use $defs and
//	                    local $ref but may not refer to other documents
//	required            field paths that must be present ("user.email": dots go into nested objects)
//	field_types         field path -> string, number, integer, boolean, object, array or null
//	constraints         field path -> {min, max, enum, min_length, max_length, pattern}; lengths apply to
//	                    strings (characters) and arrays (items); pattern is an RE2 regular expression
//	                    searched in string values
//	allow_invalid_json  false (default): string data that is not valid JSON is a match (a violation);
//	                    true: such text is not checked and does not match
//
// The reference implementation's names are accepted too, with its semantics (see reference.go):
// json_schema, required_fields, field_constraints, field_patterns, pattern_match_logic,
// allow_extra_fields, allow_null_required and case_sensitive_enums.
//
// Types and constraints apply to a field only when it is present; combine them with required. When any of
// required, field_types and constraints is given, the data must be a JSON object. Everything is compiled
// once, when the control is built.
//
// String data is parsed as JSON first (a tool argument often arrives as JSON text). Null data (a selector
// that resolved to nothing) never matches. The result's message and metadata name the violated fields and
// the failing keywords, never the values.
package jsonvalidate

import (
	"encoding/json"
	"fmt"

	"github.com/guardrail-control/guard/evaluator"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Name is the evaluator's registered name.
const Name = "json"

// Version is the evaluator's version as GET /evaluators shows it.
const Version = "1.0.0"

// fieldTypes are the JSON types field_types accepts.
var fieldTypes = []any{"string", "number", "integer", "boolean", "object", "array", "null"}

// configSchema is the JSON Schema of the evaluator's own config keys.
var configSchema = mustJSON(map[string]any{
	"type": "object",
	"properties": map[string]any{
		"schema": map[string]any{
			"type":        "object",
			"description": "JSON Schema the data must satisfy (draft 2020-12 by default; no references to other documents).",
		},
		"required": map[string]any{
			"type": "array", "maxItems": maxFields, "uniqueItems": true,
			"items":       map[string]any{"type": "string", "minLength": 1, "maxLength": maxPathLength},
			"description": "Field paths that must be present; dots go into nested objects.",
		},
		"field_types": map[string]any{
			"type": "object", "maxProperties": maxFields,
			"additionalProperties": map[string]any{"type": "string", "enum": fieldTypes},
			"description":          "Field path to the JSON type its value must have, when present.",
		},
		"constraints": map[string]any{
			"type": "object", "maxProperties": maxFields,
			"additionalProperties": map[string]any{
				"type": "object", "minProperties": 1, "additionalProperties": false,
				"properties": map[string]any{
					"min":        map[string]any{"type": "number"},
					"max":        map[string]any{"type": "number"},
					"enum":       map[string]any{"type": "array", "minItems": 1},
					"min_length": map[string]any{"type": "integer", "minimum": 0},
					"max_length": map[string]any{"type": "integer", "minimum": 0},
					"pattern":    map[string]any{"type": "string", "minLength": 1},
				},
			},
			"description": "Field path to value constraints checked when the field is present: min, max (numbers), enum, min_length, max_length (strings and arrays), pattern (RE2, searched in strings).",
		},
		"allow_invalid_json": map[string]any{
			"type": "boolean", "default": false,
			"description": "When false, string data that is not valid JSON is a violation (a match); when true it is not checked.",
		},
		// The reference implementation's names (see reference.go for their semantics).
		"json_schema": map[string]any{
			"type":        "object",
			"description": "Reference name of schema; draft 7 unless the schema says \"$schema\".",
		},
		"required_fields": map[string]any{
			"type": "array", "maxItems": maxFields, "uniqueItems": true,
			"items":       map[string]any{"type": "string", "minLength": 1, "maxLength": maxPathLength},
			"description": "Reference name of required: field paths that must be present; a null value counts as missing unless allow_null_required.",
		},
		"field_constraints": map[string]any{
			"type": "object", "maxProperties": maxFields,
			"additionalProperties": map[string]any{
				"type": "object", "minProperties": 1, "additionalProperties": false,
				"properties": map[string]any{
					"min":        map[string]any{"type": "number"},
					"max":        map[string]any{"type": "number"},
					"enum":       map[string]any{"type": "array", "minItems": 1},
					"min_length": map[string]any{"type": "integer", "minimum": 0},
					"max_length": map[string]any{"type": "integer", "minimum": 0},
				},
			},
			"description": "Reference constraints: a missing field is a violation; min/max need a number, min_length/max_length a string; enum follows case_sensitive_enums.",
		},
		"field_patterns": map[string]any{
			"type": "object", "maxProperties": maxFields,
			"additionalProperties": map[string]any{
				"anyOf": []any{
					map[string]any{"type": "string", "minLength": 1},
					map[string]any{"type": "object", "required": []any{"pattern"}, "additionalProperties": false, "properties": map[string]any{
						"pattern": map[string]any{"type": "string", "minLength": 1},
						"flags":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
					}},
				},
			},
			"description": "Field path to an RE2 pattern (or {pattern, flags: [IGNORECASE]}) searched in the field's text; a missing field fails.",
		},
		"pattern_match_logic": map[string]any{
			"type": "string", "enum": []any{"all", "any"}, "default": "all",
			"description": "field_patterns: all must match, or any one.",
		},
		"allow_extra_fields": map[string]any{
			"type": "boolean", "default": true,
			"description": "When false, a leaf field not named in field_types or required_fields is a violation.",
		},
		"allow_null_required": map[string]any{
			"type": "boolean", "default": false,
			"description": "required_fields: whether a present null value satisfies the requirement.",
		},
		"case_sensitive_enums": map[string]any{
			"type": "boolean", "default": true,
			"description": "field_constraints: when false, string enum values compare case-insensitively.",
		},
	},
	"additionalProperties": false,
})

// Limits of the convenience keys.
const (
	maxFields     = 256
	maxPathLength = 512
)

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func init() { evaluator.Register(Factory()) }

// Factory returns the json evaluator's factory, for registering into a registry other than
// evaluator.Default (the package's init already registers it there).
func Factory() evaluator.Factory {
	return evaluator.Factory{
		Name: Name,
		Description: "Validates the selected data (parsed from JSON text when it is a string) against a JSON Schema " +
			"and/or required fields, field types and constraints; matches when the data VIOLATES them.",
		Version:      Version,
		ConfigSchema: configSchema,
		New: func(config map[string]any, _ evaluator.Options) (evaluator.Evaluator, error) {
			return New(config)
		},
		Canonical: Canonical,
	}
}

// Evaluator is a configured json evaluator. It is safe for concurrent use.
type Evaluator struct {
	schemas      []*jsonschema.Schema // the user's schema and/or the one compiled from the field keys
	ref          *refChecks           // the checks of the reference's field_* names
	allowInvalid bool
}

// New builds an evaluator from a config (see the package documentation). Problems are reported as
// *evaluator.ConfigError with field paths relative to the config ("schema.properties.age.type",
// "constraints.user.age.min").
func New(config map[string]any) (*Evaluator, error) {
	e := &Evaluator{ref: newRefChecks()}
	var problems []evaluator.FieldError
	var fields fieldSpec
	hasRule := false
	for ref, own := range aliasOf {
		if _, a := config[ref]; a {
			if _, b := config[own]; b {
				problems = append(problems, evaluator.FieldError{Field: ref, Code: "conflict",
					Message: "cannot be given together with " + own + " (the same setting under guard's name)"})
			}
		}
	}
	for k, v := range config {
		if more, ok := e.ref.read(k, v); ok {
			problems = append(problems, more...)
			hasRule = hasRule || k == "required_fields" || k == "field_constraints" || k == "field_patterns"
			continue
		}
		switch k {
		case "schema", "json_schema":
			doc, ok := v.(map[string]any)
			if !ok {
				problems = append(problems, evaluator.FieldError{Field: k, Code: "type", Message: "must be an object"})
				continue
			}
			hasRule = true
			draft := jsonschema.Draft2020
			if k == "json_schema" {
				draft = jsonschema.Draft7
			}
			sch, fe := compileUserSchema(doc, draft, k)
			if fe != nil {
				problems = append(problems, *fe)
				continue
			}
			e.schemas = append([]*jsonschema.Schema{sch}, e.schemas...)
		case "required", "field_types", "constraints":
			hasRule = true
			problems = append(problems, fields.add(k, v)...)
			if m, ok := v.(map[string]any); ok && k == "field_types" {
				for p := range m {
					e.ref.known[p] = true
				}
			}
		case "allow_invalid_json":
			b, ok := v.(bool)
			if !ok {
				problems = append(problems, evaluator.FieldError{Field: k, Code: "type", Message: "must be a boolean"})
			}
			e.allowInvalid = b
		default:
			problems = append(problems, evaluator.FieldError{Field: k, Code: "unknown_field", Message: "is not a known field"})
		}
	}
	if !hasRule {
		problems = append(problems, evaluator.FieldError{Field: "schema", Code: "required",
			Message: "is required unless required, field_types, constraints (or json_schema, required_fields, field_constraints, field_patterns) is given"})
	}
	if len(problems) > 0 {
		return nil, &evaluator.ConfigError{Problems: problems}
	}
	if _, typed := config["field_types"]; !typed {
		// As in the reference, allow_extra_fields is part of the type check: without field_types it
		// has nothing to compare with and is ignored.
		e.ref.extraCheck = false
		e.ref.active = len(e.ref.required) > 0 || len(e.ref.constraints) > 0 || len(e.ref.patterns) > 0
	}
	if !fields.empty() {
		sch, err := compile(fields.schema(), jsonschema.Draft2020)
		if err != nil {
			// The generated schema is built from checked parts; failing here is a bug, reported plainly.
			return nil, &evaluator.ConfigError{Problems: []evaluator.FieldError{{Code: "invalid",
				Message: fmt.Sprintf("could not compile the field rules: %v", err)}}}
		}
		e.schemas = append(e.schemas, sch)
	}
	return e, nil
}
