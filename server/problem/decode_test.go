package problem

import (
	"errors"
	"testing"
)

type inner struct {
	Name string `json:"name"`
	N    int    `json:"n"`
}

type outer struct {
	Steps []inner          `json:"steps"`
	One   inner            `json:"one"`
	Tags  []string         `json:"tags"`
	Deep  map[string]any   `json:"deep"`
	Raw   *struct{ X int } `json:"raw"`
}

func TestDecodeBytesPaths(t *testing.T) {
	for _, tc := range []struct {
		body, status, field string
	}{
		{`{"steps":[{"name":"a"},{"name":"b","extra":1}]}`, "422", "steps.1.extra"},
		{`{"one":{"name":"a","bogus":true}}`, "422", "one.bogus"},
		{`{"steps":[{"name":"a"},{"name":5}]}`, "422", "steps.1.name"},
		{`{"one":{"n":"x"}}`, "422", "one.n"},
		{`{"steps":[{"name":5},{"name":"b"}]}`, "422", "steps.0.name"},
		{`{"steps":[{"name":"a"},{"n":1},{"n":"x"}]}`, "422", "steps.2.n"},
		{`{"surprise":1}`, "422", "surprise"},
		{`{"steps":[{"x":1}],"one":{"x":2}}`, "422", "steps.0.x"}, // the first in body order
		// Keys are compared exactly: one differing only in case is unknown (issue 32).
		{`{"one":{"NAME":"a"}}`, "422", "one.NAME"},
		{`{"one":{"name":"a","Name":"b"}}`, "422", "one.Name"},
		{`{"Steps":[]}`, "422", "Steps"},
		{`{"raw":{"x":1}}`, "422", "raw.x"}, // an untagged field is named by its Go name, X
		{`{"steps":[{"name":"a"},{"nAme":"b"}]}`, "422", "steps.1.nAme"},
		{`{"tags":[1]}`, "422", ""},
		{`{"one":{}} {"one":{}}`, "400", ""},
		{`{"one":`, "400", ""},
		{`   `, "400", ""},
	} {
		var v outer
		err := DecodeBytes([]byte(tc.body), &v)
		var pe *Error
		if !errors.As(err, &pe) {
			t.Fatalf("%s: %v", tc.body, err)
		}
		if got := map[int]string{400: "400", 422: "422"}[pe.Status]; got != tc.status {
			t.Errorf("%s: status %d, want %s", tc.body, pe.Status, tc.status)
			continue
		}
		if tc.field != "" && (len(pe.Problems) != 1 || pe.Problems[0].Field != tc.field) {
			t.Errorf("%s: problems %+v, want field %q", tc.body, pe.Problems, tc.field)
		}
	}
	var v outer
	if err := DecodeBytes([]byte(`{"steps":[{"name":"a","n":1}],"deep":{"anything":[1,{"x":2}]}}  `), &v); err != nil || v.Steps[0].N != 1 {
		t.Fatalf("valid body: %v %+v", err, v)
	}
}
