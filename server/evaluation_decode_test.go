package server

import (
	"bytes"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/server/problem"
)

// plainDecode is the plain path: what encoding/json and the duplicate-key check make of b.
func plainDecode(b []byte) (evaluationRequest, problem.Ignored, error) {
	var req evaluationRequest
	ig, err := problem.DecodeLenientBytes(b, &req)
	return req, ig, err
}

// checkFastMatchesPlain fails when the fast reader accepts b but the plain path does not give the same
// request with nothing ignored; it returns whether the fast reader accepted b.
func checkFastMatchesPlain(t testing.TB, b []byte) bool {
	t.Helper()
	var fast evaluationRequest
	if !decodeEvaluationFast(b, &fast) {
		return false
	}
	plain, ig, err := plainDecode(b)
	if err != nil {
		t.Fatalf("fast path accepted %q, the plain path refuses it: %v", b, err)
	}
	if ig.Count != 0 {
		t.Fatalf("fast path accepted %q, the plain path ignores fields %v", b, ig.Paths)
	}
	if !reflect.DeepEqual(fast, plain) {
		t.Fatalf("fast path and plain path differ on %q:\nfast  %#v\nplain %#v", b, fast, plain)
	}
	return true
}

var fastDecodeCases = []struct {
	name string
	body string
	fast bool // the fast reader takes it (false: it is left to the plain path)
}{
	{"sdk body", `{"agent_name":"bench","stage":"pre","step":{"type":"llm","name":"chat","input":"Please summarise the report.","context":{"user":"u-1"}}}`, true},
	{"white space everywhere", " \r\n\t{ \"agent_name\" : \"a\" ,\n\"stage\":\"post\", \"step\" : { \"type\" : \"tool\" , \"name\" : \"x\" , \"output\" : [ 1 , 2 ] } } \n", true},
	{"common values", `{"agent_name":"a","stage":"post","step":{"type":"tool","name":"pre"}}`, true},
	{"near common values", `{"agent_name":"a","stage":"prex","step":{"type":"llm\u0021","name":"n"}}`, true},
	{"common value escaped", `{"stage":"\u0070re","step":{"type":"ll\u006d","name":"n"}}`, true},
	{"reference sdk targets null", `{"agent_name":"a","stage":"pre","target_type":null,"target_id":null,"step":{"type":"llm","name":"c"}}`, true},
	{"targets set", `{"agent_name":"a","stage":"pre","target_type":"team","target_id":"t-1","step":{"type":"llm","name":"c"}}`, true},
	{"nulls", `{"agent_name":null,"stage":null,"step":{"type":null,"name":null,"input":null,"output":null,"context":null}}`, true},
	{"step null", `{"agent_name":"a","stage":"pre","step":null}`, true},
	{"no step", `{"agent_name":"a","stage":"pre"}`, true},
	{"empty object", `{}`, true},
	{"empty containers", `{"step":{"type":"t","name":"n","input":{"a":[],"b":{}},"context":{}}}`, true},
	{"numbers", `{"step":{"type":"t","name":"n","input":[0,-0,1,-1,1.5,-2.25e10,3E-5,1e+2,123456789012345678901234567890,0.1,4.9e-324]}}`, true},
	{"literals", `{"step":{"type":"t","name":"n","input":[true,false,null,{"x":true}]}}`, true},
	{"escapes", `{"step":{"type":"t","name":"n","input":"a\"b\\c\/d\be\ff\ng\rh\ti\u0041\u00e9\u4e2d\u0000"}}`, true},
	{"surrogate pair", `{"step":{"type":"t","name":"n","input":"\ud83d\ude00 and \uD83D\uDE00"}}`, true},
	{"utf-8 text", `{"agent_name":"a","step":{"type":"t","name":"n","input":"héllo wörld 中文 😀","context":{"ключ":"значение"}}}`, true},
	{"escaped key", `{"agent\u005fname":"a","step":{"type":"t","name":"n"}}`, true},
	{"nested", `{"step":{"type":"t","name":"n","input":{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo","n":[1,[2,[3]]]}]}}}`, true},
	{"del and high ascii", "{\"step\":{\"type\":\"t\",\"name\":\"\x7f\"}}", true},

	// Left to the plain path: it decides (accepting some, refusing others).
	{"unknown top-level field", `{"agent_name":"a","extra":1,"step":{"type":"t","name":"n"}}`, false},
	{"unknown step field", `{"step":{"type":"t","name":"n","tags":["x"]}}`, false},
	{"case-folded field", `{"Agent_Name":"a","step":{"type":"t","name":"n"}}`, false},
	{"case-folded step field", `{"step":{"Type":"t","name":"n"}}`, false},
	{"kelvin sign field", "{\"step\":{\"type\":\"t\",\"name\":\"n\",\"input\":1},\"stage\":\"pre\",\"agent_name\":\"a\",\"\u212a\":1}", false},
	{"duplicate top-level key", `{"agent_name":"a","agent_name":"b"}`, false},
	{"duplicate step key", `{"step":{"type":"t","type":"u","name":"n"}}`, false},
	{"duplicate nested key", `{"step":{"type":"t","name":"n","input":{"a":1,"a":2}}}`, false},
	{"duplicate escaped key", `{"step":{"type":"t","name":"n","context":{"a":1,"\u0061":2}}}`, false},
	{"duplicate context key", `{"step":{"type":"t","name":"n","context":{"user":"a","user":"b"}}}`, false},
	{"case-folded duplicate", `{"stage":"pre","Stage":"post"}`, false},
	{"wrong type agent_name", `{"agent_name":1}`, false},
	{"wrong type step", `{"step":"x"}`, false},
	{"wrong type context", `{"step":{"type":"t","name":"n","context":[1]}}`, false},
	{"wrong type target", `{"target_id":5}`, false},
	{"number out of range", `{"step":{"type":"t","name":"n","input":1e400}}`, false},
	{"leading zero", `{"step":{"type":"t","name":"n","input":01}}`, false},
	{"bare minus", `{"step":{"type":"t","name":"n","input":-}}`, false},
	{"trailing dot", `{"step":{"type":"t","name":"n","input":1.}}`, false},
	{"empty exponent", `{"step":{"type":"t","name":"n","input":1e}}`, false},
	{"plus sign", `{"step":{"type":"t","name":"n","input":+1}}`, false},
	{"invalid utf-8", "{\"step\":{\"type\":\"t\",\"name\":\"\xff\"}}", false},
	{"invalid utf-8 key", "{\"step\":{\"type\":\"t\",\"name\":\"n\",\"context\":{\"\xc3\":1}}}", false},
	{"lone high surrogate", `{"step":{"type":"t","name":"\ud83d"}}`, false},
	{"lone low surrogate", `{"step":{"type":"t","name":"\ude00x"}}`, false},
	{"high then not low", `{"step":{"type":"t","name":"\ud83d\u0041"}}`, false},
	{"bad escape", `{"step":{"type":"t","name":"\x"}}`, false},
	{"short unicode escape", `{"step":{"type":"t","name":"\u12"}}`, false},
	{"control character", "{\"step\":{\"type\":\"t\",\"name\":\"a\nb\"}}", false},
	{"unterminated string", `{"step":{"type":"t","name":"abc`, false},
	{"trailing backslash", `{"step":{"type":"t","name":"abc\`, false},
	{"trailing comma", `{"agent_name":"a",}`, false},
	{"trailing comma in array", `{"step":{"type":"t","name":"n","input":[1,]}}`, false},
	{"missing colon", `{"agent_name" "a"}`, false},
	{"missing comma", `{"agent_name":"a" "stage":"pre"}`, false},
	{"trailing data", `{"agent_name":"a"} {}`, false},
	{"trailing garbage", `{"agent_name":"a"}x`, false},
	{"truncated", `{"agent_name":"a"`, false},
	{"literal typo", `{"step":{"type":"t","name":"n","input":tru}}`, false},
	{"literal with tail", `{"step":{"type":"t","name":"n","input":truex}}`, false},
	{"null with tail", `{"step":nullx}`, false},
	{"top-level array", `[]`, false},
	{"top-level null", `null`, false},
	{"empty body", ``, false},
	{"blank body", "  \n", false},
	{"byte order mark", "\ufeff{}", false},
	{"single quotes", `{'agent_name':'a'}`, false},
	{"deep nesting", `{"step":{"type":"t","name":"n","input":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}}`, false},
	{"very deep nesting", `{"step":{"type":"t","name":"n","input":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}}`, false},
}

// TestEvaluationFastDecodeMatchesPlain proves the fast reader equal to the plain path: every body it
// accepts decodes to the same request, with no ignored field, as encoding/json and the duplicate-key
// check make of it; the bodies it leaves alone are the ones the table expects. Through decodeEvaluation
// every body gets exactly the plain path's request or error.
func TestEvaluationFastDecodeMatchesPlain(t *testing.T) {
	ts := newTS(t)
	for _, tc := range fastDecodeCases {
		t.Run(tc.name, func(t *testing.T) {
			b := []byte(tc.body)
			if got := checkFastMatchesPlain(t, b); got != tc.fast {
				t.Fatalf("fast path took the body: %v, want %v", got, tc.fast)
			}
			want, _, wantErr := plainDecode(b)
			var got evaluationRequest
			r := httptest.NewRequest("POST", "/api/v1/evaluation", bytes.NewReader(b))
			err := ts.srv.decodeEvaluation(httptest.NewRecorder(), r, &got)
			if !reflect.DeepEqual(err, wantErr) {
				t.Fatalf("error %v, the plain path gives %v", err, wantErr)
			}
			if err == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("decoded %#v, the plain path gives %#v", got, want)
			}
		})
	}
}

// FuzzEvaluationFastDecode: whatever the fast reader accepts, the plain path accepts with the same
// request and nothing ignored.
func FuzzEvaluationFastDecode(f *testing.F) {
	for _, tc := range fastDecodeCases {
		if len(tc.body) < 4096 {
			f.Add([]byte(tc.body))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkFastMatchesPlain(t, b)
	})
}
