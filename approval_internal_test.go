package guard

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestGrantingCopiesEverySnapshotField: granting builds its copy field by field (a snapshot holds a
// sync.Pool, which must not be copied); a field added to snapshot and not copied fails here.
func TestGrantingCopiesEverySnapshotField(t *testing.T) {
	c := Control{ID: 5, Name: "c", Data: ControlData{Enabled: true, Execution: ExecutionServer,
		Condition: Condition{Selector: &Selector{Path: "input"}, Evaluator: &EvaluatorSpec{Name: "regex", Config: map[string]any{"pattern": "secret"}}},
		Action:    Action{Decision: DecisionDeny, Approval: &Approval{}}}}
	e := New(WithLiveIndexMin(1))
	if err := e.Update([]Control{c}); err != nil {
		t.Fatal(err)
	}
	s := e.load()
	g := s.granting(5)
	if g == nil || g.controls[0].class != classOther || s.controls[0].class != classDeny {
		t.Fatal("granting did not make a copy with the control let through")
	}
	sv, gv := reflect.ValueOf(s).Elem(), reflect.ValueOf(g).Elem()
	for i := range sv.NumField() {
		name := sv.Type().Field(i).Name
		if name == "pool" || name == "controls" {
			continue
		}
		if sv.Field(i).IsZero() != gv.Field(i).IsZero() {
			t.Errorf("snapshot field %s is not copied by granting", name)
		}
	}
	if s.granting(6) != nil {
		t.Fatal("granting of an unknown control")
	}
}

// TestPayloadHashFastMatchesLibrary: the direct canonical writer gives the bytes of the library path
// (encoding/json, then jsontext's RFC 8785 Canonicalize) on edge values and on random documents.
func TestPayloadHashFastMatchesLibrary(t *testing.T) {
	lib := func(v any) string {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		h, err := CanonicalHash(raw)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	edge := []any{
		nil, true, false, 0.0, math.Copysign(0, -1), 1.0, -1.5, 0.1 + 0.2, 1e21, 1e20, 123456789012345680000.0, 1e-6, 1e-7,
		9.999999999999999e-7, 5e-324, math.MaxFloat64, -math.MaxFloat64, 4.35, 1.0 / 3, 2e-7, 1.5e300, 100.0,
		"", "plain", "quote\" backslash\\ slash/ <html> & amp", "\x00\x01\x08\x09\x0a\x0b\x0c\x0d\x1f\x7f", "é ü 中文 😀 \u2028\u2029",
		[]any{}, map[string]any{}, []any{1.0, "a", nil, []any{true}},
		map[string]any{"b": 1.0, "a": 2.0, "aa": 3.0, "A": 4.0, "": 5.0, "\u00e9": 6.0, "\U0001F600": 7.0, "\uE000": 8.0, "\uFFFF": 9.0},
		map[string]any{"nested": map[string]any{"z": []any{map[string]any{"y": 1.0, "x": 2.0}}, "a": nil}},
	}
	for _, v := range edge {
		fast, ok := payloadHashFast(v)
		if !ok {
			t.Fatalf("fast path declined %#v", v)
		}
		if want := lib(v); fast != want {
			t.Errorf("%#v: fast %s, library %s", v, fast, want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	str := func() string {
		r := []rune{}
		for range rng.IntN(6) {
			alphabet := []rune("aZ0\"\\\n\x01é中😀\uE000 ")
			r = append(r, alphabet[rng.IntN(len(alphabet))])
		}
		return string(r)
	}
	var gen func(d int) any
	gen = func(d int) any {
		switch k := rng.IntN(8); {
		case d > 4 || k == 0:
			return rng.Float64() * math.Pow(10, float64(rng.IntN(60)-30))
		case k == 1:
			return nil
		case k == 2:
			return rng.IntN(2) == 0
		case k <= 4:
			return str()
		case k == 5:
			l := []any{}
			for range rng.IntN(4) {
				l = append(l, gen(d+1))
			}
			return l
		default:
			m := map[string]any{}
			for range rng.IntN(5) {
				m[str()+string([]rune("ab😀\uE000é")[rng.IntN(5)])] = gen(d + 1)
			}
			return m
		}
	}
	for range 2000 {
		v := gen(0)
		if s, ok := v.(float64); ok && s == 0 {
			continue
		}
		fast, ok := payloadHashFast(v)
		if !ok {
			t.Fatalf("fast path declined %#v", v)
		}
		if want := lib(v); fast != want {
			t.Fatalf("%#v: fast %s, library %s", v, fast, want)
		}
	}
	// Values it does not write go the library way.
	for _, v := range []any{json.Number("12"), struct{ A int }{1}, map[string]int{"a": 1}, "bad \xff utf-8"} {
		if _, ok := payloadHashFast(v); ok {
			t.Errorf("fast path wrote %#v", v)
		}
		if _, err := PayloadHash(&Step{Input: v}, StagePre); err != nil {
			t.Errorf("%#v: %v", v, err)
		}
	}
}
