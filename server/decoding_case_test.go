package server

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// keyPaths returns the dotted path of every object key of v (a body decoded with UseNumber), sorted.
func keyPaths(v any, path string, out *[]string) {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			*out = append(*out, join(k))
			keyPaths(e, join(k), out)
		}
	case []any:
		for i, e := range x {
			keyPaths(e, join(strconv.Itoa(i)), out)
		}
	}
	sort.Strings(*out)
}

// renameKey returns v with the key at path renamed to name (v is modified).
func renameKey(v any, path []string, name string) {
	for len(path) > 1 {
		switch x := v.(type) {
		case map[string]any:
			v = x[path[0]]
		case []any:
			i, _ := strconv.Atoi(path[0])
			v = x[i]
		}
		path = path[1:]
	}
	m := v.(map[string]any)
	m[name] = m[path[0]]
	delete(m, path[0])
}

// otherCase is key with its letters in another case ("" when it has none).
func otherCase(key string) string {
	up := strings.ToUpper(key)
	if up != key {
		return up
	}
	if low := strings.ToLower(key); low != key {
		return low
	}
	return ""
}

// freeForm reports whether the key at path is data rather than a field name: the payloads of a step, free
// metadata, an evaluator's config and a template's parameters are objects whose keys are the caller's.
func freeForm(path string) bool {
	for _, seg := range strings.Split(path, ".")[:strings.Count(path, ".")] {
		switch seg {
		case "input", "output", "context", "metadata", "config", "parameters":
			return true
		}
	}
	return false
}

// requiredAt reports whether r is a 422 saying the field at path is required: the key in another case was
// not read as it (a lenient route that refuses the body counts no ignored field).
func requiredAt(t *testing.T, r *resp, path string) bool {
	if r.Code != 422 {
		return false
	}
	for _, e := range r.problem(t).Errors {
		if e.Field == path && e.Code == "required" {
			return true
		}
	}
	return false
}

// TestKeysComparedExactly walks every route that takes a body (the decoding rule's table, which fails
// when a route is missing from it) and sends each key of a valid body in another case: a strict route
// answers 422 unknown_field naming it, a lenient one skips it as an unknown field (the counter of ignored
// fields grows): neither reads it as the field it matches only without regard to case (issue 32).
func TestKeysComparedExactly(t *testing.T) {
	ts, routes := decodingTable(t)
	for _, rt := range routes {
		t.Run(rt.name, func(t *testing.T) {
			raw := rt.body("")
			var tree any
			dec := json.NewDecoder(strings.NewReader(raw))
			dec.UseNumber()
			if err := dec.Decode(&tree); err != nil {
				t.Fatal(err)
			}
			var paths []string
			keyPaths(tree, "", &paths)
			tried := 0
			for _, p := range paths {
				segs := strings.Split(p, ".")
				other := otherCase(segs[len(segs)-1])
				if other == "" || freeForm(p) {
					continue
				}
				tried++
				var v any
				dec := json.NewDecoder(strings.NewReader(rt.body("")))
				dec.UseNumber()
				if err := dec.Decode(&v); err != nil {
					t.Fatal(err)
				}
				renameKey(v, segs, other)
				var buf bytes.Buffer
				if err := json.NewEncoder(&buf).Encode(v); err != nil {
					t.Fatal(err)
				}
				want := strings.Join(append(segs[:len(segs)-1:len(segs)-1], other), ".")
				if rt.lenient {
					before := ignoredCount(t, ts, rt.method+" "+rt.path)
					r := ts.do(rt.method, rt.path, buf.String())
					if r.Code >= 500 {
						t.Fatalf("%s: status %d: %s", want, r.Code, r.Body)
					}
					if after := ignoredCount(t, ts, rt.method+" "+rt.path); after <= before && !requiredAt(t, r, p) {
						t.Errorf("%s: not skipped as an unknown field (status %d, ignored %v -> %v): %s", want, r.Code, before, after, r.Body)
					}
					continue
				}
				r := ts.do(rt.method, rt.path, buf.String())
				if r.Code != 422 {
					t.Errorf("%s: status %d, want 422: %s", want, r.Code, r.Body)
					continue
				}
				p := r.problem(t)
				found := false
				for _, e := range p.Errors {
					found = found || e.Field == want && e.Code == "unknown_field"
				}
				if !found {
					t.Errorf("%s: problems %+v, want unknown_field on %s", want, p.Errors, want)
				}
			}
			if tried == 0 {
				t.Fatal("no key tried")
			}
		})
	}
}

// TestCaseVariantsOfTheIssue are the inputs of issue 32, item 1: none is read as its lower-case field.
func TestCaseVariantsOfTheIssue(t *testing.T) {
	ts, routes := decodingTable(t)
	var approval, data string
	for _, rt := range routes {
		switch rt.name {
		case "decide approval":
			approval = rt.path
		case "put control data":
			data = rt.path
		}
	}
	for _, body := range []string{
		`{"decision":"reject","Decision":"approve"}`,
		`{"Decision":"approve","decision":"reject"}`,
		`{"DECISION":"reject"}`,
		`{"decision":"reject","Comment":"x"}`,
		`{"decision":"approve","COMMENT":"hi","Via":"mcp_elicitation"}`,
	} {
		p := ts.expectProblem(422, "VALIDATION_ERROR", "POST", approval, body)
		if p.Errors[0].Code != "unknown_field" {
			t.Errorf("%s: %+v, want unknown_field", body, p.Errors)
		}
	}
	// Nothing was decided, nothing recorded: the request is still pending, without a grant.
	if a := ts.ok(200, "GET", approval, nil); a["status"] != "pending" || a["grant"] != nil {
		t.Fatalf("after the refused decisions: %v", a)
	}
	ctl := `{"condition":{"selector":{"path":"input"},"evaluator":{"name":"regex","config":{"pattern":"x"}}},"action":{"decision":"deny"}}`
	p := ts.expectProblem(422, "VALIDATION_ERROR", "PUT", "/api/v1/controls", `{"name":"x2","Name":"x3","data":`+ctl+`}`)
	if p.Errors[0].Field != "Name" || p.Errors[0].Code != "unknown_field" {
		t.Fatalf("Name: %+v", p.Errors)
	}
	for _, name := range []string{"x2", "x3"} {
		if m := ts.ok(200, "GET", "/api/v1/controls?name="+name, nil); len(m["controls"].([]any)) != 0 {
			t.Fatalf("a control %s was created: %v", name, m)
		}
	}
	p = ts.expectProblem(422, "VALIDATION_ERROR", "PUT", data, `{"DATA":`+ctl+`}`)
	if p.Errors[0].Field != "DATA" || p.Errors[0].Code != "unknown_field" {
		t.Fatalf("DATA: %+v", p.Errors)
	}
}
