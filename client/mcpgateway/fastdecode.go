package mcpgateway

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// One-pass decoders for the two messages of every relayed tools/call: the client's request and the
// upstream's response. decodeMessage decodes a line with encoding/json, and the fast path and the relay
// then decode the parameters or the result again, each pass scanning the bytes twice (encoding/json
// validates a document before decoding it). These decoders read the line once and take out what the
// gateway needs. They are exact or they decline: each accepts only a plain form of its message (the exact
// keys, no key twice, no null where a value is expected) and returns ok=false for everything else, which
// then goes through encoding/json as before. The fuzz tests hold them to that: whatever they accept,
// encoding/json decodes to the same values.

// parseCallLine decodes a client's line that is a tools/call with a number or string ID and parameters
// of the form the fast path takes (name, and optionally arguments as an object and _meta), as
// decodeMessage and then parseFastParams would. ok=false leaves the line to decodeMessage. names, when
// not nil, returns the string equal to a plain name's bytes when it has one ("" otherwise), saving a copy
// (the gateway passes its tools' names).
func parseCallLine(line []byte, names func([]byte) string) (id jsonrpc.ID, p fastParams, ok bool) {
	var version, idTok, method, params []byte
	idKind := 0
	if !objectMembers(line, func(key, val []byte, kind int) bool {
		switch {
		case isKey(key, "jsonrpc") && version == nil:
			version = val
		case isKey(key, "id") && idTok == nil:
			idTok, idKind = val, kind
		case isKey(key, "method") && method == nil:
			method = val
		case isKey(key, "params") && params == nil:
			params = val
		default:
			return false // another key, or one a second time
		}
		return true
	}) {
		return id, p, false
	}
	if string(version) != `"2.0"` || string(method) != `"tools/call"` || idTok == nil || len(params) == 0 || params[0] != '{' {
		return id, p, false
	}
	if id, ok = parseID(idTok, idKind); !ok {
		return id, p, false
	}
	p, ok = parseCallParams(params, names)
	return id, p, ok
}

// parseID is the request ID of the JSON value tok (a string of kind kind, or a number), as
// jsonrpc.MakeID makes it from what encoding/json decodes; ok=false for any other value.
func parseID(tok []byte, kind int) (jsonrpc.ID, bool) {
	switch c := tok[0]; {
	case c == '"':
		s, ok := decodeString(tok, kind)
		if !ok {
			return jsonrpc.ID{}, false
		}
		id, err := jsonrpc.MakeID(s)
		return id, err == nil
	case c == '-' || c >= '0' && c <= '9':
		if digits := len(bytes.TrimPrefix(tok, []byte("-"))); digits <= 15 && !bytes.ContainsAny(tok, ".eE") {
			// an integer that a float64 (what encoding/json decodes it to) holds exactly
			if v, err := strconv.ParseInt(string(tok), 10, 64); err == nil {
				id, err := jsonrpc.MakeID(float64(v))
				return id, err == nil
			}
		}
		var v any
		if json.Unmarshal(tok, &v) != nil {
			return jsonrpc.ID{}, false
		}
		id, err := jsonrpc.MakeID(v)
		return id, err == nil
	}
	return jsonrpc.ID{}, false
}

// parseCallParams decodes the parameters of a tools/call as parseFastParams does, or declines.
func parseCallParams(raw []byte, names func([]byte) string) (p fastParams, ok bool) {
	var name, args, meta []byte
	nameKind := 0
	if !objectMembers(raw, func(key, val []byte, kind int) bool {
		switch {
		case isKey(key, "name") && name == nil:
			name, nameKind = val, kind
		case isKey(key, "arguments") && args == nil:
			args = val
		case isKey(key, "_meta") && meta == nil:
			meta = val
		default:
			return false
		}
		return true
	}) {
		return p, false
	}
	if name == nil || name[0] != '"' {
		return p, false
	}
	if nameKind == strPlain && names != nil {
		p.name = names(name[1 : len(name)-1])
	}
	if p.name == "" {
		if p.name, ok = decodeString(name, nameKind); !ok || p.name == "" {
			return p, false
		}
	}
	if args != nil {
		if args[0] != '{' {
			return p, false // not an object (null included): the SDK's path answers it
		}
		p.args = bytes.Clone(args) // the line's buffer is reused
	}
	if meta != nil {
		if meta[0] != '{' || json.Unmarshal(meta, &p.meta) != nil || !plainMeta(p.meta) {
			return p, false
		}
	}
	return p, true
}

// parseRelayResponse decodes an upstream's line that is a successful response to one of the relay's
// requests: its request number (the ID is a plain string relayPrefix+seq; seq is 0 for a string with
// that prefix that names no request of the relay's) and a copy of its result (an object). ok=false
// leaves the line to decodeMessage (errors included).
func parseRelayResponse(line []byte) (seq int64, result []byte, ok bool) {
	var version, idTok, res []byte
	if !objectMembers(line, func(key, val []byte, kind int) bool {
		switch {
		case isKey(key, "jsonrpc") && version == nil:
			version = val
		case isKey(key, "id") && idTok == nil && kind == strPlain:
			idTok = val
		case isKey(key, "result") && res == nil:
			res = val
		default:
			return false
		}
		return true
	}) {
		return 0, nil, false
	}
	if string(version) != `"2.0"` || idTok == nil || !bytes.HasPrefix(idTok, []byte(`"`+relayPrefix)) || len(res) == 0 || res[0] != '{' {
		return 0, nil, false
	}
	seq, _ = parseSeq(idTok[1+len(relayPrefix) : len(idTok)-1])
	return seq, bytes.Clone(res), true
}

// decodePlainResult decodes a tools/call result of text content blocks (each only a type "text" and a
// text), isError, structuredContent and _meta, as decodeToolResult does; ok=false leaves it to
// decodeToolResult. verbatim reports that raw can be passed on to the client as it is, meaning to any
// JSON decoder what the SDK's re-encoding of res would: only content (present, each block with its text)
// and isError, no key twice, no \u
// escape (whose lone surrogates decoders treat differently), valid UTF-8, and no character a line reader
// might take for a line break ("\r", "\n", U+2028, U+2029).
func decodePlainResult(raw []byte) (res *mcp.CallToolResult, verbatim bool, ok bool) {
	var content, isError, structured, meta []byte
	if !objectMembers(raw, func(key, val []byte, _ int) bool {
		switch {
		case isKey(key, "content") && content == nil:
			content = val
		case isKey(key, "isError") && isError == nil:
			isError = val
		case isKey(key, "structuredContent") && structured == nil:
			structured = val
		case isKey(key, "_meta") && meta == nil:
			meta = val
		default:
			return false
		}
		return true
	}) {
		return nil, false, false
	}
	a := &plainAlloc{}
	res = &a.res
	verbatim = structured == nil && meta == nil && content != nil // clients require content
	switch string(isError) {
	case "", "false":
	case "true":
		res.IsError = true
	default:
		return nil, false, false
	}
	if structured != nil && string(structured) != "null" {
		if json.Unmarshal(structured, &res.StructuredContent) != nil {
			return nil, false, false
		}
	}
	if meta != nil {
		if meta[0] != '{' || json.Unmarshal(meta, &res.Meta) != nil {
			return nil, false, false
		}
	}
	if content != nil && content[0] != '[' {
		return nil, false, false
	}
	res.Content = a.content[:0] // never nil, as the SDK decodes it
	var rawText string          // raw as a string, once a plain text needs it
	if content != nil && !arrayElements(content, func(el []byte) bool {
		var typ, text []byte
		textKind := strPlain
		if !objectMembers(el, func(key, val []byte, kind int) bool {
			switch {
			case isKey(key, "type") && typ == nil:
				typ = val
			case isKey(key, "text") && text == nil && kind >= 0:
				text, textKind = val, kind
			default:
				return false
			}
			return true
		}) || string(typ) != `"text"` {
			return false
		}
		var tc *mcp.TextContent
		if n := len(res.Content); n < len(a.blocks) {
			tc = &a.blocks[n]
		} else {
			tc = &mcp.TextContent{}
		}
		if text != nil {
			// A plain text is a substring of one copy of raw (text is a slice of raw: its offset is
			// where their capacities differ).
			if off := cap(raw) - cap(text); textKind == strPlain && off >= 0 && off+len(text) <= len(raw) && utf8.Valid(text) {
				if rawText == "" {
					rawText = string(raw)
				}
				tc.Text = rawText[off+1 : off+len(text)-1]
			} else {
				var ok bool
				if tc.Text, ok = decodeString(text, textKind); !ok {
					return false
				}
			}
			verbatim = verbatim && textKind != strUnicode
		} else {
			verbatim = false // clients require text (the SDK writes "")
		}
		res.Content = append(res.Content, tc)
		return true
	}) {
		return nil, false, false
	}
	verbatim = verbatim && bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 && utf8.Valid(raw) &&
		!lineSeparator(raw)
	return res, verbatim, true
}

// lineSeparator reports whether b holds U+2028 or U+2029 (UTF-8 E2 80 A8 and E2 80 A9).
func lineSeparator(b []byte) bool {
	for {
		i := bytes.Index(b, []byte("\xe2\x80"))
		if i < 0 || i+2 >= len(b) {
			return false
		}
		if c := b[i+2]; c == 0xa8 || c == 0xa9 {
			return true
		}
		b = b[i+2:]
	}
}

// plainAlloc holds a result decodePlainResult decodes and its first content blocks: one allocation for
// the usual result of a text block or two.
type plainAlloc struct {
	res     mcp.CallToolResult
	content [2]mcp.Content
	blocks  [2]mcp.TextContent
}

// objectMembers validates that b is exactly one JSON object and calls f with each member: its key
// (quotes included), its value, and the value's string kind when it is a string (-1 otherwise). It
// reports false when b is not an object, or f returned false.
func objectMembers(b []byte, f func(key, val []byte, kind int) bool) bool {
	if len(b) == 0 || b[0] != '{' {
		return false
	}
	i := skipSpace(b, 1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		k0 := i
		var ok bool
		if i, _, ok = skipString(b, i); !ok {
			return false
		}
		key := b[k0:i]
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		v0 := skipSpace(b, i+1)
		kind := -1
		if v0 < len(b) && b[v0] == '"' {
			i, kind, ok = skipString(b, v0)
		} else {
			i, ok = skipValue(b, v0, 1)
		}
		if !ok || !f(key, b[v0:i], kind) {
			return false
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return false
		}
		if b[i] == '}' {
			return skipSpace(b, i+1) == len(b)
		}
		if b[i] != ',' {
			return false
		}
		i = skipSpace(b, i+1)
	}
}

// arrayElements validates that b is exactly one JSON array and calls f with each element.
func arrayElements(b []byte, f func(el []byte) bool) bool {
	if len(b) == 0 || b[0] != '[' {
		return false
	}
	i := skipSpace(b, 1)
	if i < len(b) && b[i] == ']' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		e, ok := skipValue(b, i, 1)
		if !ok || !f(b[i:e]) {
			return false
		}
		i = skipSpace(b, e)
		if i >= len(b) {
			return false
		}
		if b[i] == ']' {
			return skipSpace(b, i+1) == len(b)
		}
		if b[i] != ',' {
			return false
		}
		i = skipSpace(b, i+1)
	}
}
