package jsonvalidate

// The stored form of a config. One setting has two names with one meaning once the draft is explicit:
// guard's schema (draft 2020-12 unless "$schema" says otherwise) and the reference's json_schema (draft 7
// unless "$schema" says otherwise). A control stores it as json_schema, the reference's name, with the
// draft written into the schema when the client left it implicit, because:
//
//   - controls with execution "sdk" are run by the reference's SDKs with their own json evaluator, which
//     knows json_schema only, and SDKs read controls back: the reference's name is the one both sides
//     understand;
//   - the conversion is exact in this direction (a schema with "$schema" means the same under either
//     name), while guard's required and constraints have no reference counterpart with the same
//     semantics and the reference's field_* settings none in guard: those settings have one name each
//     and are stored as written.
//
// So the round trip of a control whose config says "schema" reads back "json_schema" with "$schema" set
// to draft 2020-12, and evaluates exactly as before.

// draft2020URI is the "$schema" value of JSON Schema draft 2020-12, guard's default draft for schema.
const draft2020URI = "https://json-schema.org/draft/2020-12/schema"

// Canonical returns config with schema renamed json_schema (the draft made explicit when the schema does
// not name one); any other config is returned unchanged. It does not modify config.
func Canonical(config map[string]any) map[string]any {
	doc, ok := config["schema"].(map[string]any)
	if !ok {
		return config
	}
	if _, both := config["json_schema"]; both {
		return config // not valid (a conflict); left for validation to report
	}
	out := make(map[string]any, len(config))
	for k, v := range config {
		if k != "schema" {
			out[k] = v
		}
	}
	if _, named := doc["$schema"]; !named {
		withDraft := make(map[string]any, len(doc)+1)
		for k, v := range doc {
			withDraft[k] = v
		}
		withDraft["$schema"] = draft2020URI
		doc = withDraft
	}
	out["json_schema"] = doc
	return out
}
