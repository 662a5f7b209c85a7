package mcpgateway

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/guardrail-control/guard/internal/strictjson"
)

// The one-pass decoders must be exact or decline: the checks below hold each to encoding/json (through
// the decoders they replace) on the same bytes. The tables show which forms they take; the fuzz targets
// (go test -fuzz FuzzCallLine etc.) look for a line where they disagree.

// callLineAgrees checks parseCallLine on line against decodeMessage and parseFastParams.
func callLineAgrees(line []byte) error {
	id, p, ok := parseCallLine(line, nil)
	// with the names of tools, as the gateway decodes its client's lines: the same
	id2, p2, ok2 := parseCallLine(line, func(b []byte) string {
		if n := string(b); n == "echo" || n == "sum" || n == p.name {
			return n
		}
		return ""
	})
	if ok2 != ok || id2 != id || p2.name != p.name || !bytes.Equal(p2.args, p.args) || !reflect.DeepEqual(p2.meta, p.meta) {
		return fmt.Errorf("with tool names: %v %v %+v, without %v %v %+v", ok2, id2, p2, ok, id, p)
	}
	if !ok {
		return nil // declined: the line goes to decodeMessage as before
	}
	if !json.Valid(line) {
		return fmt.Errorf("accepted invalid JSON")
	}
	msg, err := decodeMessage(line)
	if err != nil {
		return fmt.Errorf("accepted a line decodeMessage refuses: %v", err)
	}
	req, isReq := msg.(*jsonrpc.Request)
	if !isReq || req.Method != "tools/call" || !req.IsCall() {
		return fmt.Errorf("accepted %#v as a tools/call", msg)
	}
	if req.ID != id {
		return fmt.Errorf("id %#v, decodeMessage %#v", id.Raw(), req.ID.Raw())
	}
	q, ok := parseFastParams(req.Params)
	if !ok {
		return fmt.Errorf("accepted parameters parseFastParams declines: %s", req.Params)
	}
	if p.name != q.name || !bytes.Equal(p.args, q.args) || !reflect.DeepEqual(p.meta, q.meta) {
		return fmt.Errorf("params %q %s %v, parseFastParams %q %s %v", p.name, p.args, p.meta, q.name, q.args, q.meta)
	}
	return nil
}

// relayResponseAgrees checks parseRelayResponse on line against decodeMessage.
func relayResponseAgrees(line []byte) error {
	seq, result, ok := parseRelayResponse(line)
	if !ok {
		return nil
	}
	if !json.Valid(line) {
		return fmt.Errorf("accepted invalid JSON")
	}
	msg, err := decodeMessage(line)
	if err != nil {
		return fmt.Errorf("accepted a line decodeMessage refuses: %v", err)
	}
	resp, isResp := msg.(*jsonrpc.Response)
	if !isResp || resp.Error != nil {
		return fmt.Errorf("accepted %#v as a result", msg)
	}
	id, _ := resp.ID.Raw().(string)
	if n, named := parseSeq(strings.TrimPrefix(id, relayPrefix)); !strings.HasPrefix(id, relayPrefix) || n != seq || seq == 0 && named {
		return fmt.Errorf("request %d, decodeMessage %#v", seq, resp.ID.Raw())
	}
	if !bytes.Equal(result, resp.Result) {
		return fmt.Errorf("result %s, decodeMessage %s", result, resp.Result)
	}
	return nil
}

// plainResultAgrees checks decodePlainResult on raw against decodeToolResult, and that a verbatim result
// means to encoding/json what the SDK's encoding of the decoded result means.
func plainResultAgrees(raw []byte) error {
	res, verbatim, ok := decodePlainResult(raw)
	if !ok {
		return nil
	}
	if !json.Valid(raw) {
		return fmt.Errorf("accepted invalid JSON")
	}
	want, err := decodeToolResult(raw)
	if err != nil {
		return fmt.Errorf("accepted a result decodeToolResult refuses: %v", err)
	}
	if !reflect.DeepEqual(res, want) {
		g, _ := json.Marshal(res)
		w, _ := json.Marshal(want)
		return fmt.Errorf("decoded %s, decodeToolResult %s", g, w)
	}
	if verbatim {
		enc, err := res.MarshalJSON()
		if err != nil {
			return err
		}
		var a, b any
		if json.Unmarshal(raw, &a) != nil || json.Unmarshal(enc, &b) != nil {
			return fmt.Errorf("verbatim result does not decode")
		}
		am, _ := a.(map[string]any)
		if am["isError"] == false {
			delete(am, "isError") // omitted when false by the SDK's encoder
		}
		if !reflect.DeepEqual(a, b) {
			return fmt.Errorf("verbatim %s means something else than %s", raw, enc)
		}
		if !utf8ValidNoBreaks(raw) || bytes.Contains(raw, []byte(`\u`)) {
			return fmt.Errorf("verbatim result %q has a line break, a \\u escape or invalid UTF-8", raw)
		}
	}
	return nil
}

func utf8ValidNoBreaks(b []byte) bool {
	return strings.ToValidUTF8(string(b), "\uFFFD") == string(b) && !bytes.ContainsAny(b, "\r\n\u2028\u2029")
}

var callLines = []struct {
	line   string
	accept bool
}{
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`, true},
	{`{"jsonrpc":"2.0","id":"s-1","method":"tools/call","params":{"name":"echo","arguments":{}}}`, true},
	{` { "params" : { "arguments" : { "a" : [ 1 , 2.5e3 , null , true , false , "x\n" ] } , "name" : "echo" } , "method" : "tools/call" , "id" : -7 , "jsonrpc" : "2.0" } `, false}, // not trimmed
	{`{ "params" : { "arguments" : { "a" : [ 1 , 2.5e3 , null , true , false , "x\n" ] } , "name" : "echo" } , "method" : "tools/call" , "id" : -7 , "jsonrpc" : "2.0" }`, true},
	{`{"jsonrpc":"2.0","id":"\u0041\ud83d\ude00","method":"tools/call","params":{"name":"ech\u006f"}}`, true},
	{`{"jsonrpc":"2.0","id":"\ud800","method":"tools/call","params":{"name":"echo"}}`, true}, // a lone surrogate, as encoding/json decodes it
	{`{"jsonrpc":"2.0","id":1e2,"method":"tools/call","params":{"name":"echo"}}`, true},
	{`{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"echo"}}`, true},
	{`{"jsonrpc":"2.0","id":123456789012345,"method":"tools/call","params":{"name":"echo"}}`, true},
	{`{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"echo"}}`, true},
	{`{"jsonrpc":"2.0","id":-0,"method":"tools/call","params":{"name":"echo"}}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"trace":"t"}}}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":1}}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/x":1}}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":null}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":null}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":[1]}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":""}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":1}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","requestState":"s"}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"other"}}`, false},
	{`{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"echo"}}`, false},
	{`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"echo"}}`, false},
	{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo"}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, false},
	{`{"jsonrpc":"2.0","id":1,"Method":"tools/call","params":{"name":"echo"}}`, false},
	{`{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"echo"}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}} x`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":01}}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":"\x"}}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":"` + "\t" + `"}}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":1,}}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":tru}}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}}}`, false}, // deeper than the scanner goes
	{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"\xff\xfe\"}}", true},                                                            // invalid UTF-8, replaced as encoding/json does
}

// TestParseCallLine: the one-pass decoder of a client's tools/call takes the plain forms, gives what
// decodeMessage and parseFastParams give, and declines the rest.
func TestParseCallLine(t *testing.T) {
	for _, tc := range callLines {
		_, _, ok := parseCallLine([]byte(tc.line), nil)
		if ok != tc.accept {
			t.Errorf("%s: accepted %v, want %v", tc.line, ok, tc.accept)
		}
		if err := callLineAgrees([]byte(tc.line)); err != nil {
			t.Errorf("%s: %v", tc.line, err)
		}
	}
	id, p, _ := parseCallLine([]byte(`{"jsonrpc":"2.0","id":"\u0041\ud83d\ude00","method":"tools/call","params":{"name":"ech\u006f","arguments":{"a" : 1}}}`), nil)
	if id.Raw() != "A😀" || p.name != "echo" || string(p.args) != `{"a" : 1}` {
		t.Fatalf("id %#v, params %+v", id.Raw(), p)
	}
}

var relayLines = []struct {
	line   string
	accept bool
}{
	{`{"jsonrpc":"2.0","id":"guard-1","result":{"content":[{"type":"text","text":"hi"}]}}`, true},
	{`{"result":{},"id":"guard-12","jsonrpc":"2.0"}`, true},
	{`{"jsonrpc":"2.0","id":"guard-1","result":{"content":[]},"result":{}}`, false},
	{`{"jsonrpc":"2.0","id":"guard-1","error":{"code":-32603,"message":"x"}}`, false},
	{`{"jsonrpc":"2.0","id":"guard-1","result":null}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{}}`, false},
	{`{"jsonrpc":"2.0","id":"other","result":{}}`, false},
	{`{"jsonrpc":"2.0","id":"guard\u002d1","result":{}}`, false},
	{`{"jsonrpc":"2.0","id":"guard-01","result":{}}`, true}, // taken, no call of the relay's: dropped
	{`{"jsonrpc":"2.0","id":"guard-x","result":{}}`, true},
	{`{"jsonrpc":"2.0","id":"guard-1","result":{},"method":"x"}`, false},
	{`{"jsonrpc":"2.0","id":"guard-1","result":{"a":[}}`, false},
}

// TestParseRelayResponse: the one-pass decoder of the upstream's answer to a relayed call.
func TestParseRelayResponse(t *testing.T) {
	for _, tc := range relayLines {
		_, _, ok := parseRelayResponse([]byte(tc.line))
		if ok != tc.accept {
			t.Errorf("%s: accepted %v, want %v", tc.line, ok, tc.accept)
		}
		if err := relayResponseAgrees([]byte(tc.line)); err != nil {
			t.Errorf("%s: %v", tc.line, err)
		}
	}
}

var plainResults = []struct {
	raw              string
	accept, verbatim bool
}{
	{`{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`, true, true},
	{`{"content":[{"type":"text","text":"say \"hi\"\n\tnow <b>&</b> é 😀"}],"isError":true}`, true, true},
	{`{"content":[{"type":"text","text":"x"}],"isError":false}`, true, true},
	{`{"content":[{"text":"x","type":"text"}]}`, true, true},
	{`{"content":[{"type":"text"}]}`, true, false},
	{`{"content":[]}`, true, true},
	{`{}`, true, false},
	{`{"content":[{"type":"text","text":"caf\u00e9"}]}`, true, false},
	{`{"content":[{"type":"text","text":"\ud800"}]}`, true, false},
	{"{\"content\":[{\"type\":\"text\",\"text\":\"\xff\"}]}", true, false},
	{"{\"content\":[{\"type\":\"text\",\"text\":\"a\u2028b\"}]}", true, false},
	{"{\"content\":[{\"type\":\"text\",\"text\":\"a\"}],\r\"isError\":true}", true, false},
	{`{"content":[{"type":"text","text":"x"}],"structuredContent":{"n":1,"l":[true,null,"s"]},"isError":true,"_meta":{"k":"v"}}`, true, false},
	{`{"content":[{"type":"text","text":"x"}],"structuredContent":null}`, true, false},
	{`{"content":[{"type":"text","text":"x"}],"structuredContent":12345678901234567890}`, true, false},
	{`{"content":null}`, false, false},
	{`{"content":[{"type":"text","text":"x"}],"isError":null}`, false, false},
	{`{"content":[{"type":"text","text":null}]}`, false, false},
	{`{"content":[{"type":"text","text":"a","text":"b"}]}`, false, false},
	{`{"content":[{"type":"text","text":"a"}],"content":[]}`, false, false},
	{`{"content":[{"type":"image","data":"AAE=","mimeType":"image/png"}]}`, false, false},
	{`{"content":[{"type":"text","text":"t","annotations":{"priority":0.5}}]}`, false, false},
	{`{"content":[{"type":"text","text":"t"}],"resultType":"complete"}`, false, false},
	{`{"Content":[{"type":"text","text":"t"}]}`, false, false},
	{`{"content":[{"type":"text","text":"t"}],"_meta":null}`, false, false},
	{`{"content":[1]}`, false, false},
}

// TestDecodePlainResult: the one-pass decoder of a result gives what decodeToolResult gives, and lets the
// client have the upstream's bytes only for plain text results.
func TestDecodePlainResult(t *testing.T) {
	for _, tc := range plainResults {
		_, verbatim, ok := decodePlainResult([]byte(tc.raw))
		if ok != tc.accept || verbatim != tc.verbatim {
			t.Errorf("%s: accepted %v verbatim %v, want %v %v", tc.raw, ok, verbatim, tc.accept, tc.verbatim)
		}
		if err := plainResultAgrees([]byte(tc.raw)); err != nil {
			t.Errorf("%s: %v", tc.raw, err)
		}
	}
}

// TestResponseLine: the hand-written response carries the ID as the SDK's encoder writes it.
func TestResponseLine(t *testing.T) {
	for _, v := range []any{float64(1), float64(-42), "s-1", "<&>\"\\é"} {
		id, err := jsonrpc.MakeID(v)
		if err != nil {
			t.Fatal(err)
		}
		want, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: json.RawMessage(`{"content":[]}`)})
		if err != nil {
			t.Fatal(err)
		}
		if got := responseLine(id, []byte(`{"content":[]}`)); string(got) != string(want)+"\n" {
			t.Errorf("id %#v:\n got %s\nwant %s", v, got, want)
		}
	}
}

func FuzzCallLine(f *testing.F) {
	for _, tc := range callLines {
		f.Add([]byte(tc.line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if err := callLineAgrees(line); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
	})
}

func FuzzRelayResponse(f *testing.F) {
	for _, tc := range relayLines {
		f.Add([]byte(tc.line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if err := relayResponseAgrees(line); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
	})
}

func FuzzPlainResult(f *testing.F) {
	for _, tc := range plainResults {
		f.Add([]byte(tc.raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if err := plainResultAgrees(raw); err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
	})
}

// objectAgrees checks decodeObject on b against json.Unmarshal into a map[string]any.
func objectAgrees(b []byte) error {
	got, ok := decodeObject(b)
	if !ok {
		return nil
	}
	var want map[string]any
	if err := strictjson.UnmarshalLenient(b, &want); err != nil {
		return fmt.Errorf("accepted what strictjson refuses: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("decoded %#v, strictjson %#v", got, want)
	}
	return nil
}

var objects = []struct {
	raw    string
	accept bool
}{
	{`{}`, true},
	{`{"text":"list the files","n":-1.5e-3,"l":[],"o":{},"t":true,"f":false,"z":null}`, true},
	{`{"a":1,"a":2}`, false}, // a repeated key: strictjson refuses it (issue 32)
	{`{"o":{"b":1,"b":2}}`, false},
	{`{"a":1,"A":2}`, true}, // two keys
	{`{"caf\u00e9":"\ud83d\ude00 \ud800 \"q\"\n"}`, true},
	{"{\"\xff\":\"\xfe\"}", true},                        // invalid UTF-8, replaced as encoding/json does
	{` { "a" : [ 1 , [ 2 , { "b" : [ ] } ] ] } `, false}, // not trimmed
	{`{ "a" : [ 1 , [ 2 , { "b" : [ ] } ] ] }`, true},
	{`{"big":1e400}`, false},
	{`{"tiny":1e-400}`, true},
	{`{"a":01}`, false},
	{`{"a":1,}`, false},
	{`{"a":[1,]}`, false},
	{`{"a":"\x"}`, false},
	{`{"a":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`, false},
	{`[1]`, false},
	{`{"a":1} {}`, false},
}

// TestDecodeObject: the one-pass decoder of a call's arguments gives what strictjson gives, or declines.
func TestDecodeObject(t *testing.T) {
	for _, tc := range objects {
		if _, ok := decodeObject([]byte(tc.raw)); ok != tc.accept {
			t.Errorf("%s: accepted %v, want %v", tc.raw, ok, tc.accept)
		}
		if err := objectAgrees([]byte(tc.raw)); err != nil {
			t.Errorf("%s: %v", tc.raw, err)
		}
	}
}

func FuzzDecodeObject(f *testing.F) {
	for _, tc := range objects {
		f.Add([]byte(tc.raw))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := objectAgrees(b); err != nil {
			t.Fatalf("%q: %v", b, err)
		}
	})
}

// TestStopMask: the eight-byte test of skipString finds the first quote, backslash or control character
// wherever it is in the word, whatever the other bytes, and reports none when there is none.
func TestStopMask(t *testing.T) {
	first := func(w [8]byte) int { // the index of the first byte skipString looks at, 8 for none
		for i, c := range w {
			if strStop[c] {
				return i
			}
		}
		return 8
	}
	check := func(w [8]byte) {
		t.Helper()
		got := 8
		if m := stopMask(binary.LittleEndian.Uint64(w[:])); m != 0 {
			got = bits.TrailingZeros64(m) / 8
		}
		if want := first(w); got != want {
			t.Fatalf("stopMask(% x) finds byte %d, want %d", w, got, want)
		}
	}
	fill := []byte{'a', 0x7f, 0x80, 0xff, ' ', '!', '#', '[', ']', 0xa2, 0xdc, 0x00, 0x1f, '"', '\\'}
	for c := 0; c < 256; c++ {
		for k := 0; k < 8; k++ {
			for _, f := range fill {
				for _, g := range fill[:5] { // bytes before k and after it
					var w [8]byte
					for i := range w {
						w[i] = g
						if i > k {
							w[i] = f
						}
					}
					w[k] = byte(c)
					check(w)
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 20 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], r.Uint64())
		check(w)
	}
}
