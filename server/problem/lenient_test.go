package problem

import (
	"reflect"
	"testing"
)

type embedded struct {
	Shared string `json:"shared"`
}

type lenientTarget struct {
	embedded
	Name  string           `json:"name"`
	Steps []inner          `json:"steps"`
	Meta  map[string]any   `json:"meta"`
	Typed map[string]inner `json:"typed"`
	Ptr   *inner           `json:"ptr"`
}

func TestDecodeLenient(t *testing.T) {
	for _, tc := range []struct {
		name  string
		body  string
		paths []string
		count int
	}{
		{"no unknown field", `{"name":"a","steps":[{"name":"s","n":1}],"meta":{"anything":{"x":1}},"shared":"e"}`, nil, 0},
		{"top level", `{"name":"a","extra":1,"more":{"x":1}}`, []string{"extra", "more"}, 2},
		{"in a list", `{"steps":[{"name":"a"},{"name":"b","applies_to":"llm_call"}]}`, []string{"steps.1.applies_to"}, 1},
		{"behind a pointer", `{"ptr":{"name":"a","created_at":"x"}}`, []string{"ptr.created_at"}, 1},
		{"typed map values", `{"typed":{"k":{"n":1,"z":2}}}`, []string{"typed.k.z"}, 1},
		{"a key differing only in case is unknown", `{"NAME":"a","Steps":[{"Name":"x"}]}`, []string{"NAME", "Steps"}, 2},
		{"case differs in a list", `{"steps":[{"name":"a","N":2}]}`, []string{"steps.0.N"}, 1},
		{"free-form map never unknown", `{"meta":{"a":{"b":{"c":1}}}}`, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v lenientTarget
			ig, err := DecodeLenientBytes([]byte(tc.body), &v)
			if err != nil {
				t.Fatal(err)
			}
			if ig.Count != tc.count || !reflect.DeepEqual(ig.Paths, tc.paths) {
				t.Fatalf("ignored %+v, want %d %v", ig, tc.count, tc.paths)
			}
		})
	}
	// Never read into the field it matches only without regard to case, whatever the order.
	for _, body := range []string{`{"name":"a","NAME":"b"}`, `{"NAME":"b","name":"a"}`, `{"Name":"b","name":"a","nAmE":"c"}`} {
		var v lenientTarget
		if _, err := DecodeLenientBytes([]byte(body), &v); err != nil || v.Name != "a" {
			t.Errorf("%s: decoded %+v %v, want name a", body, v, err)
		}
	}
	var v lenientTarget
	if _, err := DecodeLenientBytes([]byte(`{"name":"a","extra":1,"steps":[{"name":"b"}]}`), &v); err != nil || v.Name != "a" || len(v.Steps) != 1 {
		t.Fatalf("decoded %+v %v", v, err)
	}
	// Everything but unknown fields is refused as strictly as by DecodeBytes.
	for _, tc := range []struct{ body, field string }{
		{`{"extra":1,"name":5}`, "name"},
		{`{"name":5,"extra":1}`, "name"},
		{`{"steps":[{"n":"x","extra":1}]}`, "steps.0.n"},
	} {
		var v lenientTarget
		_, err := DecodeLenientBytes([]byte(tc.body), &v)
		pe := From(err)
		if err == nil || pe.Status != 422 || pe.Problems[0].Field != tc.field || pe.Problems[0].Code != "type" {
			t.Errorf("%s: %v %+v", tc.body, err, pe.Problems)
		}
	}
	for _, body := range []string{`{"extra":1`, `   `, `{"a":1} x`} {
		var v lenientTarget
		if _, err := DecodeLenientBytes([]byte(body), &v); From(err).Status != 400 {
			t.Errorf("%s: %v", body, err)
		}
	}
}

func TestDecodeLenientManyUnknown(t *testing.T) {
	body := `{"steps":[`
	for i := 0; i < 50; i++ {
		if i > 0 {
			body += ","
		}
		body += `{"name":"s","x":1}`
	}
	body += `]}`
	var v lenientTarget
	ig, err := DecodeLenientBytes([]byte(body), &v)
	if err != nil || ig.Count != 50 || len(ig.Paths) != MaxIgnoredPaths || ig.Paths[0] != "steps.0.x" {
		t.Fatalf("%+v %v", ig, err)
	}
}
