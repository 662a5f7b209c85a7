package strictjson

import (
	"errors"
	"testing"
)

type inner struct {
	Name string `json:"name"`
}

type target struct {
	inner
	Decision string           `json:"decision"`
	N        int8             `json:"n"`
	List     []inner          `json:"list"`
	Free     map[string]any   `json:"free"`
	ByName   map[string]inner `json:"by_name"`
	Plain    string
}

// TestUnmarshal: keys compared exactly, repeated keys refused, unknown ones refused (strict) or skipped
// (lenient), every failure a *Error with its kind and dotted path.
func TestUnmarshal(t *testing.T) {
	for _, tc := range []struct {
		in              string
		strict, lenient Kind // 0: accepted
		path            string
	}{
		{`{"decision":"deny","name":"a","Plain":"p","free":{"A":1,"a":2}}`, 0, 0, ""},
		{`{"decision":"reject","Decision":"approve"}`, KindUnknown, 0, "Decision"},
		{`{"DECISION":"approve"}`, KindUnknown, 0, "DECISION"},
		{`{"plain":"p"}`, KindUnknown, 0, "plain"},
		{`{"list":[{"name":"a"},{"NAME":"b"}]}`, KindUnknown, 0, "list.1.NAME"},
		{`{"by_name":{"k":{"Name":"b"}}}`, KindUnknown, 0, "by_name.k.Name"},
		{`{"decision":"a","decision":"b"}`, KindDuplicate, KindDuplicate, "decision"},
		{`{"free":{"x":[{"k":1,"k":2}]}}`, KindDuplicate, KindDuplicate, "free.x.0.k"},
		{`{"decision":"a","d\u0065cision":"b"}`, KindDuplicate, KindDuplicate, "decision"},
		{`{"n":"x"}`, KindType, KindType, "n"},
		{`{"n":1.5}`, KindType, KindType, "n"},
		{`{"n":128}`, KindRange, KindRange, "n"},
		{`{"n":1e400}`, KindRange, KindRange, "n"},
		{`{"decision":`, KindSyntax, KindSyntax, ""},
		{`{} {}`, KindSyntax, KindSyntax, ""},
	} {
		for _, mode := range []struct {
			name string
			f    func([]byte, any) error
			want Kind
		}{{"strict", Unmarshal, tc.strict}, {"lenient", UnmarshalLenient, tc.lenient}} {
			var v target
			err := mode.f([]byte(tc.in), &v)
			if mode.want == 0 {
				if err != nil {
					t.Errorf("%s %s: %v", mode.name, tc.in, err)
				}
				if v.Decision == "approve" {
					t.Errorf("%s %s: decision %q read from another key", mode.name, tc.in, v.Decision)
				}
				continue
			}
			var se *Error
			if !errors.As(err, &se) || se.Kind != mode.want || mode.want != KindSyntax && se.Path != tc.path {
				t.Errorf("%s %s: %#v, want kind %d at %q", mode.name, tc.in, err, mode.want, tc.path)
			}
		}
	}
}

// TestUnknown names the keys a lenient decoding skipped, exactly.
func TestUnknown(t *testing.T) {
	in := []byte(`{"decision":"a","Decision":"b","list":[{"name":"x","NAME":"y"}],"free":{"Z":1},"by_name":{"k":{"zz":1}}}`)
	var v target
	if err := UnmarshalLenient(in, &v); err != nil || v.Decision != "a" || v.List[0].Name != "x" {
		t.Fatalf("%v %+v", err, v)
	}
	n, paths := Unknown(in, &v, 2)
	// Sorted within one object: Decision, by_name (k.zz), ... list (0.NAME); free is free-form.
	if n != 3 || len(paths) != 2 || paths[0] != "Decision" || paths[1] != "by_name.k.zz" {
		t.Fatalf("%d %v", n, paths)
	}
}

// TestCheck: syntax errors and repeated keys, nothing else.
func TestCheck(t *testing.T) {
	if err := Check([]byte(`{"a":1,"A":2,"b":[{"a":1},{"a":1}]}`)); err != nil {
		t.Fatal(err)
	}
	var se *Error
	if err := Check([]byte(`{"b":{"a":1,"a":1}}`)); !errors.As(err, &se) || se.Kind != KindDuplicate || se.Path != "b.a" {
		t.Fatalf("%v", err)
	}
	if err := Check([]byte(`{"a":1} x`)); !errors.As(err, &se) || se.Kind != KindSyntax {
		t.Fatalf("%v", err)
	}
}
