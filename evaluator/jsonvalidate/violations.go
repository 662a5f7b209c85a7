package jsonvalidate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// Violation is one failed rule: the field (a dotted path into the data, "" for the whole value) and the
// JSON Schema keyword that failed ("required", "type", "minimum", "pattern", "anyOf", ...).
type Violation struct {
	Field   string `json:"field"`
	Keyword string `json:"keyword"`
}

// maxSegment bounds one path segment as reported; longer names are cut.
const maxSegment = 64

// collect flattens a validation error into its failed leaves, sorted and without duplicates. anyOf,
// oneOf and not are reported as one violation of their own: the failures of their branches are
// alternatives, not separate faults.
func collect(ve *jsonschema.ValidationError) []Violation {
	var out []Violation
	walk(ve, &out)
	sortViolations(out)
	return dedupe(out)
}

func sortViolations(vs []Violation) {
	sort.Slice(vs, func(i, j int) bool {
		if vs[i].Field != vs[j].Field {
			return vs[i].Field < vs[j].Field
		}
		return vs[i].Keyword < vs[j].Keyword
	})
}

func walk(ve *jsonschema.ValidationError, out *[]Violation) {
	base := fieldPath(ve.InstanceLocation)
	switch k := ve.ErrorKind.(type) {
	case *kind.AnyOf:
		*out = append(*out, Violation{base, "anyOf"})
		return
	case *kind.OneOf:
		*out = append(*out, Violation{base, "oneOf"})
		return
	case *kind.Required:
		for _, m := range k.Missing {
			*out = append(*out, Violation{joinPath(base, cut(m)), "required"})
		}
		return
	case *kind.DependentRequired:
		for _, m := range k.Missing {
			*out = append(*out, Violation{joinPath(base, cut(m)), "dependentRequired"})
		}
		return
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			*out = append(*out, Violation{joinPath(base, cut(p)), "additionalProperties"})
		}
		return
	}
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			walk(c, out)
		}
		return
	}
	*out = append(*out, Violation{base, keyword(ve.ErrorKind)})
}

// keyword names the failed keyword of a leaf error.
func keyword(k jsonschema.ErrorKind) string {
	if _, ok := k.(*kind.InvalidJsonValue); ok {
		return "type"
	}
	if p := k.KeywordPath(); len(p) > 0 && p[0] != "" {
		return p[0]
	}
	return "invalid"
}

func fieldPath(loc []string) string {
	parts := make([]string, len(loc))
	for i, s := range loc {
		parts[i] = cut(s)
	}
	return strings.Join(parts, ".")
}

func cut(s string) string {
	if len(s) <= maxSegment {
		return s
	}
	return strings.ToValidUTF8(s[:maxSegment], "") + "…"
}

func dedupe(in []Violation) []Violation {
	out := in[:0]
	for i, v := range in {
		if i > 0 && v == in[i-1] {
			continue
		}
		out = append(out, v)
	}
	return out
}

// maxListed bounds the violations named in a message and in metadata.
const maxListed = 20

// describe writes the message of a violating value: fields and keywords only, never values.
func describe(vs []Violation) string {
	var b strings.Builder
	b.WriteString("data violates the JSON schema: ")
	for i, v := range vs {
		if i == maxListed {
			fmt.Fprintf(&b, " and %d more", len(vs)-maxListed)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		f := v.Field
		if f == "" {
			f = "(root)"
		}
		b.WriteString(f)
		b.WriteString(" (")
		b.WriteString(v.Keyword)
		b.WriteByte(')')
	}
	return b.String()
}
