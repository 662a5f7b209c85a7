package strictjson

import (
	"encoding"
	stdjson "encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

	json "github.com/go-json-experiment/json"
)

// Unknown returns how many keys of b (JSON that UnmarshalLenient accepted into a value of dst's type)
// the type has no field for, and the dotted paths of the first max of them, in input order of objects
// and sorted within one object. Keys are matched exactly, as UnmarshalLenient matches them. Values
// decoded into any, maps of any, or a type that decodes itself (UnmarshalJSON) are free-form: nothing in
// them is unknown.
func Unknown(b []byte, dst any, max int) (count int, paths []string) {
	t := reflect.TypeOf(dst)
	if t == nil {
		return 0, nil
	}
	var tree any
	if json.Unmarshal(b, &tree, lenient) != nil {
		return 0, nil
	}
	w := unknownWalk{max: max}
	w.walk(tree, t, "")
	return w.count, w.paths
}

type unknownWalk struct {
	max   int
	count int
	paths []string
}

var (
	stdUnmarshaler  = reflect.TypeFor[stdjson.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	unmarshalerFrom = reflect.TypeFor[json.UnmarshalerFrom]()
)

// decodesItself reports whether t (or *t) has its own decoding method: its keys are its business.
func decodesItself(t reflect.Type) bool {
	for _, m := range []reflect.Type{stdUnmarshaler, textUnmarshaler, unmarshalerFrom} {
		if t.Implements(m) || reflect.PointerTo(t).Implements(m) {
			return true
		}
	}
	return false
}

func (w *unknownWalk) walk(v any, t reflect.Type, path string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if decodesItself(t) {
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
			ft, ok := fields[k]
			if !ok {
				w.count++
				if len(w.paths) < w.max {
					w.paths = append(w.paths, join(k))
				}
				continue
			}
			w.walk(obj[k], ft, join(k))
		}
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			return
		}
		for i, e := range arr {
			w.walk(e, t.Elem(), join(strconv.Itoa(i)))
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok || t.Elem().Kind() == reflect.Interface {
			return
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			w.walk(obj[k], t.Elem(), join(k))
		}
	}
}

var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

// fieldsOf returns the JSON names of t's fields, as the decoder names them: the tag's name, else the Go
// name, the fields of untagged embedded structs promoted.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	if f, ok := fieldCache.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	f := map[string]reflect.Type{}
	collectFields(t, f)
	fieldCache.Store(t, f)
	return f
}

func collectFields(t reflect.Type, f map[string]reflect.Type) {
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
		f[name] = sf.Type
	}
}
