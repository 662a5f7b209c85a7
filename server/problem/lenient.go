package problem

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// The decoding rule (docs/api.md, "Request bodies"): control-plane bodies are decoded strictly
// (DecodeJSON, DecodeBytes: an unknown field is a 422), runtime and registration bodies leniently
// (DecodeLenient, DecodeLenientBytes: unknown fields are skipped and reported to the caller, which counts
// and logs them). Both refuse invalid JSON, wrong types and duplicate keys the same way.

// MaxIgnoredPaths bounds the paths DecodeLenientBytes reports (the count it reports is exact).
const MaxIgnoredPaths = 32

// Ignored describes the unknown fields a lenient decoding skipped.
type Ignored struct {
	// Count is the number of unknown fields in the body.
	Count int
	// Paths are the dotted paths of the first MaxIgnoredPaths of them ("agent.agent_created_at",
	// "events.3.applies_to"), in body order of objects and sorted within one object. Never values.
	Paths []string
}

// DecodeLenient reads the body and decodes it into dst like DecodeJSON, except that fields dst does not
// know are skipped and described in the result.
func DecodeLenient(r *http.Request, dst any) (Ignored, error) {
	b, err := ReadBody(r)
	if err != nil {
		return Ignored{}, err
	}
	return DecodeLenientBytes(b, dst)
}

// DecodeLenientBytes decodes b into dst ignoring unknown fields. The common body, with no unknown field,
// costs one strict decoding; only a body with unknown fields is decoded again and walked to name them.
func DecodeLenientBytes(b []byte, dst any) (Ignored, error) {
	err := decode(b, dst, true)
	if err == nil || !isUnknownField(err) {
		return Ignored{}, err
	}
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return Ignored{}, err
	}
	v.Elem().Set(reflect.Zero(v.Elem().Type())) // the strict pass may have filled part of it
	if err := decode(b, dst, false); err != nil {
		return Ignored{}, err
	}
	var tree any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if dec.Decode(&tree) != nil {
		return Ignored{Count: 1}, nil // not reachable: b was just decoded
	}
	var ig Ignored
	unknownFields(tree, v.Type().Elem(), "", &ig)
	return ig, nil
}

func isUnknownField(err error) bool {
	pe, ok := err.(*Error)
	return ok && pe.Status == http.StatusUnprocessableEntity && len(pe.Problems) == 1 && pe.Problems[0].Code == "unknown_field"
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// unknownFields walks the decoded body v beside the Go type t it was decoded into and records the object
// keys t has no field for. Values decoded into any, maps of any, json.RawMessage or a type with its own
// UnmarshalJSON are free-form: nothing in them is unknown.
func unknownFields(v any, t reflect.Type, path string, ig *Ignored) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return
	}
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return
		}
		fields := fieldsOf(t)
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ft, ok := fields.lookup(k)
			if !ok {
				ig.Count++
				if len(ig.Paths) < MaxIgnoredPaths {
					ig.Paths = append(ig.Paths, join(k))
				}
				continue
			}
			unknownFields(obj[k], ft, join(k), ig)
		}
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			return
		}
		for i, e := range arr {
			unknownFields(e, t.Elem(), join(strconv.Itoa(i)), ig)
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok || t.Elem().Kind() == reflect.Interface {
			return
		}
		for k, e := range obj {
			unknownFields(e, t.Elem(), join(k), ig)
		}
	}
}

// structFields are the JSON names of a struct's fields, as encoding/json matches them: exactly, else
// case-insensitively.
type structFields struct {
	exact map[string]reflect.Type
	fold  map[string]reflect.Type
}

func (f *structFields) lookup(k string) (reflect.Type, bool) {
	if t, ok := f.exact[k]; ok {
		return t, true
	}
	t, ok := f.fold[strings.ToLower(k)]
	return t, ok
}

var fieldCache sync.Map // reflect.Type -> *structFields

func fieldsOf(t reflect.Type) *structFields {
	if f, ok := fieldCache.Load(t); ok {
		return f.(*structFields)
	}
	f := &structFields{exact: map[string]reflect.Type{}, fold: map[string]reflect.Type{}}
	collectFields(t, f)
	fieldCache.Store(t, f)
	return f
}

// collectFields adds the exported fields of t, promoting those of embedded structs as encoding/json does.
func collectFields(t reflect.Type, f *structFields) {
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if sf.Anonymous && name == "" {
			et := sf.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				collectFields(et, f)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		f.exact[name] = sf.Type
		f.fold[strings.ToLower(name)] = sf.Type
	}
}
