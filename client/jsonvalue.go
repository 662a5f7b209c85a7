package client

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
)

// toJSONValue turns v into the JSON-like value selectors work on (string, float64, bool, nil, []any,
// map[string]any), as if it had gone through json.Marshal and json.Unmarshal. Strings, numbers,
// booleans, json.RawMessage and maps and slices of those take a direct path without encoding; anything
// else (structs, typed maps and slices) is marshalled and unmarshalled, so its json tags apply.
func toJSONValue(v any) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		return x, nil
	case bool:
		return x, nil
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	case int:
		return float64(x), nil
	case int32:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case uint:
		return float64(x), nil
	case uint32:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	case json.RawMessage:
		return unmarshalAny(x)
	case []byte:
		// encoding/json writes []byte as base64; do the same.
		return viaJSON(x)
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out, nil
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, s := range x {
			out[k] = s
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			ev, err := toJSONValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = ev
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			ev, err := toJSONValue(e)
			if err != nil {
				return nil, err
			}
			out[k] = ev
		}
		return out, nil
	}
	return viaJSON(v)
}

func viaJSON(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("cannot be encoded as JSON: %w", err)
	}
	return unmarshalAny(raw)
}

func unmarshalAny(raw []byte) (any, error) {
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("is not valid JSON: %w", err)
	}
	return out, nil
}

// funcName returns the bare name of the function fn ("searchWeb" for pkg.searchWeb, "Search" for the
// method value (*T).Search). Anonymous functions get names like "func1": give them a StepName.
func funcName(fn any) string {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func || v.IsNil() {
		return ""
	}
	f := runtime.FuncForPC(v.Pointer())
	if f == nil {
		return ""
	}
	name := strings.TrimSuffix(f.Name(), "-fm")
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	return name
}

// newExecutionID returns a random version-4 UUID. Events need unique ids, not unpredictable ones, so a
// fast generator is used instead of crypto/rand.
func newExecutionID() string {
	var b [16]byte
	hi, lo := rand.Uint64(), rand.Uint64()
	for i := 0; i < 8; i++ {
		b[i] = byte(hi >> (8 * i))
		b[8+i] = byte(lo >> (8 * i))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	const hexd = "0123456789abcdef"
	var s [36]byte
	j := 0
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			s[j] = '-'
			j++
		}
		s[j], s[j+1] = hexd[c>>4], hexd[c&0x0f]
		j += 2
	}
	return string(s[:])
}
