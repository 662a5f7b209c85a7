package jsonvalidate

import (
	"errors"
	"net/url"
	"strings"

	"github.com/guardrail-control/guard/evaluator"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaURL is the in-memory location the config's schema is compiled at.
const schemaURL = "mem:///json-evaluator/schema.json"

// noLoader refuses every document that is not the config's own schema or a bundled metaschema: a
// control must not make the server read files or fetch URLs.
type noLoader struct{}

func (noLoader) Load(string) (any, error) {
	return nil, errors.New("references to other documents are not supported")
}

// compile compiles doc (decoded JSON) as a standalone schema, in draft unless it says otherwise.
func compile(doc any, draft *jsonschema.Draft) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(draft)
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemaURL)
}

// compileUserSchema compiles the config's schema (under key: schema or json_schema) and turns a failure
// into a FieldError under key that locates the problem without quoting the schema's text.
func compileUserSchema(doc map[string]any, draft *jsonschema.Draft, key string) (*jsonschema.Schema, *evaluator.FieldError) {
	sch, err := compile(doc, draft)
	if err == nil {
		return sch, nil
	}
	fe := &evaluator.FieldError{Field: key, Code: "invalid_schema", Message: "is not a valid JSON Schema"}
	var sve *jsonschema.SchemaValidationError
	var rex *jsonschema.InvalidRegexError
	var lue *jsonschema.LoadURLError
	var unsupported *jsonschema.UnsupportedDraftError
	switch {
	case errors.As(err, &sve):
		var ve *jsonschema.ValidationError
		if errors.As(sve.Err, &ve) {
			if v := collect(ve); len(v) > 0 {
				fe.Field = joinPath(key, v[0].Field)
				fe.Message = "is not valid in a JSON Schema (" + v[0].Keyword + ")"
				if v[0].Keyword == "format" && isRegexPlace(fe.Field) {
					fe.Code, fe.Message = "invalid_regex", "is not a valid regular expression"
				}
			}
		}
	case errors.As(err, &rex):
		fe.Code = "invalid_regex"
		fe.Field = joinPath(key, pointerPath(rex.URL))
		fe.Message = "is not a valid regular expression"
	case errors.As(err, &lue):
		fe.Code = "unsupported_ref"
		fe.Message = "refers to another document; only references inside the schema ($defs) are supported"
	case errors.As(err, &unsupported):
		fe.Field = key + ".$schema"
		fe.Message = "names an unsupported JSON Schema draft"
	}
	return nil, fe
}

// pointerPath turns the fragment of a schema location ("...#/properties/a/pattern") into a dotted path.
func pointerPath(loc string) string {
	_, frag, ok := strings.Cut(loc, "#")
	if !ok {
		return ""
	}
	if f, err := url.PathUnescape(frag); err == nil {
		frag = f
	}
	frag = strings.Trim(frag, "/")
	if frag == "" {
		return ""
	}
	parts := strings.Split(frag, "/")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
	}
	return strings.Join(parts, ".")
}

func joinPath(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "." + b
}

// isRegexPlace reports whether a schema path names a regular expression (pattern, patternProperties).
func isRegexPlace(path string) bool {
	return strings.HasSuffix(path, ".pattern") || strings.HasSuffix(path, ".patternProperties") || strings.Contains(path, ".patternProperties.")
}
