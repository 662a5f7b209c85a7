package evaluator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// commonProperties is the JSON Schema of the config keys every evaluator accepts. They are merged into
// each factory's ConfigSchema by the registry.
func commonProperties(external bool) map[string]any {
	def := DefaultTimeout.Milliseconds()
	if external {
		def = DefaultExternalTimeout.Milliseconds()
	}
	return map[string]any{
		"on_error": map[string]any{
			"type":        "string",
			"enum":        []any{string(OnErrorDeny), string(OnErrorAllow)},
			"default":     string(OnErrorDeny),
			"description": "What an evaluator error means: deny (fail closed, counts as a match) or allow (fail open).",
		},
		"timeout_ms": map[string]any{
			"type":        "integer",
			"minimum":     1,
			"maximum":     maxTimeoutFor(external).Milliseconds(),
			"default":     def,
			"description": "How long one evaluation may take, in milliseconds (the whole evaluation is bounded by its request deadline too).",
		},
	}
}

// mergedSchema returns the factory's ConfigSchema with on_error and timeout_ms added to its properties,
// so that schemas with "additionalProperties": false still accept them. An empty ConfigSchema becomes an
// object schema with only the common keys.
func mergedSchema(raw json.RawMessage, external bool) (json.RawMessage, error) {
	doc := map[string]any{}
	if len(bytes.TrimSpace(raw)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			return nil, fmt.Errorf("config schema is not a JSON object: %w", err)
		}
	}
	if _, ok := doc["type"]; !ok {
		doc["type"] = "object"
	}
	props, _ := doc["properties"].(map[string]any)
	if props == nil {
		if _, exists := doc["properties"]; exists {
			return nil, errors.New(`config schema "properties" is not an object`)
		}
		props = map[string]any{}
	}
	for k, v := range commonProperties(external) {
		props[k] = v
	}
	doc["properties"] = props
	return json.Marshal(doc)
}

// compileSchema compiles a merged config schema (JSON Schema draft 2020-12 unless it says otherwise).
func compileSchema(name string, merged json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(merged))
	if err != nil {
		return nil, err
	}
	loc := "mem:///evaluators/" + url.PathEscape(name) + ".json"
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	return c.Compile(loc)
}

// prepare compiles f's merged schema once; Register calls it and panics on an error. A copy of an
// already registered factory (registering into a second registry) keeps its compiled schema.
func (f *Factory) prepare() error {
	if f.compiled != nil {
		return nil
	}
	merged, err := mergedSchema(f.ConfigSchema, f.External)
	if err != nil {
		return err
	}
	sch, err := compileSchema(f.Name, merged)
	if err != nil {
		return err
	}
	f.ConfigSchema = merged
	f.compiled = sch
	return nil
}

// SchemaJSON returns the JSON Schema of the whole config as GET /evaluators shows it: the factory's own
// keys plus on_error and timeout_ms. For a registered factory it is the same document as ConfigSchema.
func (f *Factory) SchemaJSON() json.RawMessage {
	if f.compiled != nil {
		return f.ConfigSchema
	}
	merged, err := mergedSchema(f.ConfigSchema, f.External)
	if err != nil {
		return f.ConfigSchema
	}
	return merged
}

// validateSchema checks config (including on_error and timeout_ms) against the factory's compiled schema
// and returns one FieldError per failing leaf, sorted by field. A factory that was never registered has
// no compiled schema and is not checked here.
func (f *Factory) validateSchema(config map[string]any) []FieldError {
	if f.compiled == nil {
		return nil
	}
	var inst any = config
	if config == nil {
		inst = map[string]any{}
	}
	err := f.compiled.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []FieldError{{Code: "invalid", Message: "config could not be validated"}}
	}
	var out []FieldError
	collectSchemaErrors(ve, &out)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Field != out[j].Field {
			return out[i].Field < out[j].Field
		}
		return out[i].Code < out[j].Code
	})
	return dedupeProblems(out)
}

// collectSchemaErrors appends a FieldError for every leaf of the validation error tree.
func collectSchemaErrors(ve *jsonschema.ValidationError, out *[]FieldError) {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			collectSchemaErrors(c, out)
		}
		return
	}
	base := strings.Join(ve.InstanceLocation, ".")
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		for _, m := range k.Missing {
			*out = append(*out, FieldError{Field: joinField(base, m), Code: "required", Message: "is required"})
		}
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			*out = append(*out, FieldError{Field: joinField(base, p), Code: "unknown_field", Message: "is not a known field"})
		}
	default:
		*out = append(*out, FieldError{Field: base, Code: schemaCode(ve.ErrorKind), Message: schemaMessage(ve.ErrorKind)})
	}
}

func joinField(base, name string) string {
	if base == "" {
		return name
	}
	return base + "." + name
}

// schemaCode is the failing keyword ("type", "enum", "minimum", ...).
func schemaCode(k jsonschema.ErrorKind) string {
	if _, ok := k.(*kind.InvalidJsonValue); ok {
		return "type"
	}
	if p := k.KeywordPath(); len(p) > 0 && p[0] != "" {
		return p[0]
	}
	return "invalid"
}

// patternMessages explains schema patterns whose text would mean little to a user.
var patternMessages = map[string]string{
	`\S`: "must not be blank",
}

// schemaMessage describes a failed keyword in words, using only what the schema requires: it never
// repeats the value that was given.
func schemaMessage(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		return "must be " + withArticle(k.Want)
	case *kind.InvalidJsonValue:
		return "must be a JSON value"
	case *kind.Enum:
		return "must be one of " + joinValues(k.Want)
	case *kind.Const:
		return "must be " + joinValues([]any{k.Want})
	case *kind.Minimum:
		return "must be at least " + ratString(k.Want.FloatString(6))
	case *kind.Maximum:
		return "must be at most " + ratString(k.Want.FloatString(6))
	case *kind.ExclusiveMinimum:
		return "must be greater than " + ratString(k.Want.FloatString(6))
	case *kind.ExclusiveMaximum:
		return "must be less than " + ratString(k.Want.FloatString(6))
	case *kind.MultipleOf:
		return "must be a multiple of " + ratString(k.Want.FloatString(6))
	case *kind.MinLength:
		return fmt.Sprintf("must have at least %d characters", k.Want)
	case *kind.MaxLength:
		return fmt.Sprintf("must have at most %d characters", k.Want)
	case *kind.MinItems:
		return fmt.Sprintf("must have at least %d items", k.Want)
	case *kind.MaxItems:
		return fmt.Sprintf("must have at most %d items", k.Want)
	case *kind.MinProperties:
		return fmt.Sprintf("must have at least %d fields", k.Want)
	case *kind.MaxProperties:
		return fmt.Sprintf("must have at most %d fields", k.Want)
	case *kind.UniqueItems:
		return fmt.Sprintf("must not repeat items (items %d and %d are equal)", k.Duplicates[0], k.Duplicates[1])
	case *kind.Pattern:
		if m, ok := patternMessages[k.Want]; ok {
			return m
		}
		return "must match the pattern " + k.Want
	case *kind.Format:
		return "must be a valid " + k.Want
	case *kind.FalseSchema:
		return "is not allowed"
	}
	return "is invalid"
}

// ratString trims the zeros FloatString leaves after the decimal point.
func ratString(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func withArticle(types []string) string {
	parts := make([]string, len(types))
	for i, t := range types {
		switch t {
		case "array", "object", "integer":
			parts[i] = "an " + t
		case "null":
			parts[i] = "null"
		default:
			parts[i] = "a " + t
		}
	}
	return strings.Join(parts, " or ")
}

func joinValues(vals []any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		switch v := v.(type) {
		case string:
			parts[i] = v
		case []any, map[string]any:
			parts[i] = "a JSON value"
		default:
			parts[i] = fmt.Sprint(v)
		}
	}
	return strings.Join(parts, ", ")
}

// dedupeProblems drops repeated (field, code) pairs from a sorted list.
func dedupeProblems(in []FieldError) []FieldError {
	out := in[:0]
	for i, p := range in {
		if i > 0 && p.Field == in[i-1].Field && p.Code == in[i-1].Code {
			continue
		}
		out = append(out, p)
	}
	return out
}

// normalizeConfig returns config with every value in the shapes encoding/json decodes to, so that
// configs built in Go ([]string, int, structs) validate like configs read from JSON. Configs that are
// already in that shape are returned as is.
func normalizeConfig(config map[string]any) (map[string]any, bool) {
	if isJSONShaped(config, 0) {
		return config, true
	}
	b, err := json.Marshal(config)
	if err != nil {
		return config, false
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return config, false
	}
	return out, true
}

func isJSONShaped(v any, depth int) bool {
	if depth > 64 {
		return false
	}
	switch v := v.(type) {
	case nil, string, bool, float64, json.Number:
		return true
	case map[string]any:
		for _, e := range v {
			if !isJSONShaped(e, depth+1) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range v {
			if !isJSONShaped(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}
