package evaluator

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func decodeConfig(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad test config %s: %v", s, err)
	}
	return m
}

type problem struct{ Field, Code string }

func problemsOf(t *testing.T, err error) []problem {
	t.Helper()
	if err == nil {
		return nil
	}
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v is not a *ConfigError", err)
	}
	out := make([]problem, 0, len(ce.Problems))
	for _, p := range ce.Problems {
		out = append(out, problem{p.Field, p.Code})
	}
	return out
}

func TestConfigValidation(t *testing.T) {
	const secret = "s3cr3t-VALUE"
	tests := []struct {
		name      string
		evaluator string
		config    string
		want      []problem
	}{
		{"regex ok", "regex", `{"pattern":"a+b"}`, nil},
		{"regex ok with common keys", "regex", `{"pattern":"a","on_error":"allow","timeout_ms":50,"flags":["I","MULTILINE","DOTALL"]}`, nil},
		{"regex missing pattern", "regex", `{}`, []problem{{"pattern", "required"}}},
		{"regex empty config null", "regex", `null`, []problem{{"pattern", "required"}}},
		{"regex pattern wrong type", "regex", `{"pattern":12}`, []problem{{"pattern", "type"}}},
		{"regex pattern empty", "regex", `{"pattern":""}`, []problem{{"pattern", "minLength"}}},
		{"regex pattern too long", "regex", `{"pattern":"` + strings.Repeat("a", MaxPatternLength+1) + `"}`, []problem{{"pattern", "maxLength"}}},
		{"regex unknown field", "regex", `{"pattern":"a","` + secret + `x":1}`, []problem{{secret + "x", "unknown_field"}}},
		{"regex bad flag", "regex", `{"pattern":"a","flags":["I","` + secret + `"]}`, []problem{{"flags.1", "enum"}}},
		{"regex flags not a list", "regex", `{"pattern":"a","flags":"I"}`, []problem{{"flags", "type"}}},
		{"regex invalid", "regex", `{"pattern":"(` + secret + `"}`, []problem{{"pattern", "invalid_regex"}}},
		{"regex invalid and unknown field", "regex", `{"pattern":"(` + secret + `","bogus":1}`, []problem{{"bogus", "unknown_field"}, {"pattern", "invalid_regex"}}},
		{"regex invalid backtracking", "regex", `{"pattern":"(?<=` + secret + `"}`, []problem{{"pattern", "invalid_regex"}}},
		{"on_error bad", "regex", `{"pattern":"a","on_error":"` + secret + `"}`, []problem{{"on_error", "enum"}}},
		{"timeout zero", "regex", `{"pattern":"a","timeout_ms":0}`, []problem{{"timeout_ms", "minimum"}}},
		{"timeout too big", "regex", `{"pattern":"a","timeout_ms":300001}`, []problem{{"timeout_ms", "maximum"}}},
		{"timeout at the built-in maximum", "regex", `{"pattern":"a","timeout_ms":10000}`, nil},
		{"timeout above the built-in maximum", "regex", `{"pattern":"a","timeout_ms":10001}`, []problem{{"timeout_ms", "maximum"}}},
		{"list timeout above the built-in maximum", "list", `{"values":["a"],"timeout_ms":30000}`, []problem{{"timeout_ms", "maximum"}}},
		{"timeout fraction", "regex", `{"pattern":"a","timeout_ms":1.5}`, []problem{{"timeout_ms", "type"}}},
		{"timeout string", "regex", `{"pattern":"a","timeout_ms":"` + secret + `"}`, []problem{{"timeout_ms", "type"}}},
		{"several problems", "regex", `{"flags":[1],"on_error":"x","zz":true}`, []problem{
			{"flags.0", "type"}, {"on_error", "enum"}, {"pattern", "required"}, {"zz", "unknown_field"}}},

		{"list ok", "list", `{"values":["a","b c"],"case_sensitive":true,"logic":"all","match_on":"no_match","match_mode":"contains"}`, nil},
		{"list missing values", "list", `{"logic":"any"}`, []problem{{"values", "required"}}},
		{"list empty values", "list", `{"values":[]}`, []problem{{"values", "minItems"}}},
		{"list blank value", "list", `{"values":["a","  \t"]}`, []problem{{"values.1", "pattern"}}},
		{"list empty value", "list", `{"values":["a",""]}`, []problem{{"values.1", "minLength"}, {"values.1", "pattern"}}},
		{"list value not string", "list", `{"values":["a",7,null]}`, []problem{{"values.1", "type"}, {"values.2", "type"}}},
		{"list value too long", "list", `{"values":["` + strings.Repeat("x", 1025) + `"]}`, []problem{{"values.0", "maxLength"}}},
		{"list too many values", "list", `{"values":` + manyValues(1001) + `}`, []problem{{"values", "maxItems"}}},
		{"list bad logic", "list", `{"values":["a"],"logic":"` + secret + `"}`, []problem{{"logic", "enum"}}},
		{"list bad match_on", "list", `{"values":["a"],"match_on":"never"}`, []problem{{"match_on", "enum"}}},
		{"list bad match_mode", "list", `{"values":["a"],"match_mode":"regex"}`, []problem{{"match_mode", "enum"}}},
		{"list bad case_sensitive", "list", `{"values":["a"],"case_sensitive":"yes"}`, []problem{{"case_sensitive", "type"}}},
		{"list unknown field", "list", `{"values":["a"],"mode":"exact"}`, []problem{{"mode", "unknown_field"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Default.Validate(tt.evaluator, decodeConfig(t, tt.config))
			got := problemsOf(t, err)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("problems = %v, want %v (err %v)", got, tt.want, err)
			}
			var ce *ConfigError
			if errors.As(err, &ce) {
				for _, p := range ce.Problems {
					if p.Message == "" || strings.Contains(p.Message, secret) || strings.Contains(p.Message, "xxxx") {
						t.Errorf("message %q is empty or echoes the value", p.Message)
					}
				}
			}
		})
	}
}

func manyValues(n int) string {
	vals := make([]string, n)
	for i := range vals {
		vals[i] = "v"
	}
	b, _ := json.Marshal(vals)
	return string(b)
}

func TestBuildCommonSettings(t *testing.T) {
	b, err := Default.Build("regex", map[string]any{"pattern": "a", "on_error": "allow", "timeout_ms": float64(250)})
	if err != nil {
		t.Fatal(err)
	}
	if b.OnError != OnErrorAllow || b.Timeout.Milliseconds() != 250 {
		t.Fatalf("got on_error %q timeout %v", b.OnError, b.Timeout)
	}
	b, err = Default.Build("list", map[string]any{"values": []any{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	if b.OnError != OnErrorDeny || b.Timeout != DefaultTimeout {
		t.Fatalf("defaults: got on_error %q timeout %v", b.OnError, b.Timeout)
	}
}

func TestBuildAcceptsGoValues(t *testing.T) {
	// Configs built in Go code rather than decoded from JSON.
	b, err := Default.Build("list", map[string]any{"values": []string{"alpha"}, "timeout_ms": 20})
	if err != nil {
		t.Fatal(err)
	}
	if b.Timeout.Milliseconds() != 20 {
		t.Fatalf("timeout %v", b.Timeout)
	}
	if _, err := Default.Build("list", map[string]any{"values": []int{1}}); err == nil {
		t.Fatal("[]int values accepted")
	}
}

func TestBuildUnknownEvaluator(t *testing.T) {
	_, err := Default.Build("nope", map[string]any{})
	if !errors.Is(err, ErrUnknownEvaluator) {
		t.Fatalf("err = %v", err)
	}
}

func TestSchemaJSONIncludesCommonKeys(t *testing.T) {
	for _, f := range Default.List() {
		var doc struct {
			Type                 string                    `json:"type"`
			Properties           map[string]map[string]any `json:"properties"`
			AdditionalProperties *bool                     `json:"additionalProperties"`
		}
		if err := json.Unmarshal(f.SchemaJSON(), &doc); err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if string(f.SchemaJSON()) != string(f.ConfigSchema) {
			t.Errorf("%s: SchemaJSON differs from ConfigSchema after Register", f.Name)
		}
		if doc.Type != "object" || doc.Properties["on_error"] == nil || doc.Properties["timeout_ms"] == nil {
			t.Errorf("%s: schema lacks the common keys: %s", f.Name, f.SchemaJSON())
		}
		if doc.Properties["timeout_ms"]["default"] != float64(1000) {
			t.Errorf("%s: timeout_ms default = %v", f.Name, doc.Properties["timeout_ms"]["default"])
		}
		if f.Version != "1.0.0" || f.Description == "" {
			t.Errorf("%s: version %q description %q", f.Name, f.Version, f.Description)
		}
	}
}

func TestRegisterCustomSchemas(t *testing.T) {
	noop := func(map[string]any, Options) (Evaluator, error) { return nil, nil }
	r := NewRegistry()
	RegisterBuiltins(r)
	r.Register(Factory{Name: "ext.none", External: true, New: noop}) // no schema: only the common keys
	r.Register(Factory{Name: "nested", New: noop, ConfigSchema: json.RawMessage(`{
		"type":"object",
		"properties":{"rules":{"type":"array","items":{"type":"object","properties":{"n":{"type":"integer","minimum":3}},"required":["id"]}}}}`)})

	if names := factoryNames(r.List()); !reflect.DeepEqual(names, []string{"ext.none", "list", "nested", "regex", "threshold"}) {
		t.Fatalf("names %v", names)
	}
	copied := NewRegistry()
	for _, f := range r.List() {
		copied.Register(*f)
	}
	if err := copied.Validate("regex", map[string]any{"pattern": "a", "timeout_ms": float64(5)}); err != nil {
		t.Errorf("copied registry: %v", err)
	}
	if got := problemsOf(t, copied.Validate("regex", map[string]any{"x": 1.0})); len(got) != 2 {
		t.Errorf("copied registry problems %v", got)
	}
	f, _ := r.Lookup("ext.none")
	if !strings.Contains(string(f.SchemaJSON()), `"default":10000`) {
		t.Errorf("external default timeout missing: %s", f.SchemaJSON())
	}
	if err := r.Validate("ext.none", map[string]any{"anything": 1, "timeout_ms": float64(20000)}); err != nil {
		t.Errorf("open schema rejected: %v", err)
	}
	// External evaluators may wait longer than built-ins, but not past MaxExternalTimeout.
	if !strings.Contains(string(f.SchemaJSON()), `"maximum":30000`) {
		t.Errorf("external maximum timeout missing: %s", f.SchemaJSON())
	}
	if got := problemsOf(t, r.Validate("ext.none", map[string]any{"timeout_ms": float64(30001)})); !reflect.DeepEqual(got, []problem{{"timeout_ms", "maximum"}}) {
		t.Errorf("external timeout above the maximum: %v", got)
	}
	got := problemsOf(t, r.Validate("nested", decodeConfig(t, `{"rules":[{"id":1,"n":5},{"n":1}]}`)))
	want := []problem{{"rules.1.id", "required"}, {"rules.1.n", "minimum"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("nested problems = %v, want %v", got, want)
	}
}

func factoryNames(fs []*Factory) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

func TestRegisterPanics(t *testing.T) {
	noop := func(map[string]any, Options) (Evaluator, error) { return nil, nil }
	tests := []struct {
		name string
		f    Factory
	}{
		{"invalid schema", Factory{Name: "bad", New: noop, ConfigSchema: json.RawMessage(`{"type":"strange"}`)}},
		{"not json", Factory{Name: "bad", New: noop, ConfigSchema: json.RawMessage(`{`)}},
		{"properties not object", Factory{Name: "bad", New: noop, ConfigSchema: json.RawMessage(`{"properties":[]}`)}},
		{"duplicate", Factory{Name: "regex", New: noop}},
		{"no New", Factory{Name: "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRegistry()
			RegisterBuiltins(r)
			defer func() {
				if recover() == nil {
					t.Fatal("Register did not panic")
				}
			}()
			r.Register(tt.f)
		})
	}
}
