package problem

import (
	"errors"
	"testing"
)

// TestNumbersOutOfRange: issue 23. replay's limit 1e400 answered code "type": a number beyond its field's
// range is code "range" whatever its spelling; a fraction or a string for an integer stays "type".
func TestNumbersOutOfRange(t *testing.T) {
	type body struct {
		N  *int      `json:"n"`
		S  int8      `json:"s"`
		U  uint32    `json:"u"`
		F  float64   `json:"f"`
		Fs []float32 `json:"fs"`
	}
	for _, tc := range []struct {
		body, field, code string
	}{
		{`{"n":1e400}`, "n", "range"},
		{`{"n":-1e400}`, "n", "range"},
		{`{"n":99999999999999999999}`, "n", "range"},
		{`{"n":1e20}`, "n", "range"},
		{`{"n":9223372036854775808}`, "n", "range"},
		{`{"s":128}`, "s", "range"},
		{`{"s":-129}`, "s", "range"},
		{`{"u":-1}`, "u", "range"},
		{`{"u":4294967296}`, "u", "range"},
		{`{"f":1e400}`, "f", "range"},
		{`{"fs":[1,1e39]}`, "fs.1", "range"},
		{`{"n":1.5}`, "n", "type"},
		{`{"n":"5"}`, "n", "type"},
		{`{"n":1e2}`, "n", "type"}, // encoding/json takes no exponent for an integer: not a range problem
	} {
		var v body
		err := DecodeBytes([]byte(tc.body), &v)
		var pe *Error
		if !errors.As(err, &pe) || pe.Status != 422 || len(pe.Problems) != 1 {
			t.Fatalf("%s: %v", tc.body, err)
		}
		if p := pe.Problems[0]; p.Field != tc.field || p.Code != tc.code {
			t.Errorf("%s: problem %+v, want %s at %s", tc.body, p, tc.code, tc.field)
		}
	}
	var v body
	if err := DecodeBytes([]byte(`{"n":9223372036854775807,"s":-128,"u":4294967295,"f":1.7e308}`), &v); err != nil {
		t.Fatalf("values at the bounds: %v", err)
	}
}
