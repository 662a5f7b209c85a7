package mcpgateway

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrail-control/guard/internal/strictjson"
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
	var version, idTok, method []byte
	var params callParams
	idKind, hasParams := 0, false
	end, ok := objectAt(line, 0, func(key []byte, v0 int) (int, bool) {
		if isKey(key, "params") && !hasParams {
			hasParams = true // decoded in the same pass as the line (not scanned first to find its end)
			return params.scan(line, v0)
		}
		v1, kind, ok := scanValue(line, v0)
		switch {
		case !ok:
			return 0, false
		case isKey(key, "jsonrpc") && version == nil:
			version = line[v0:v1]
		case isKey(key, "id") && idTok == nil:
			idTok, idKind = line[v0:v1], kind
		case isKey(key, "method") && method == nil:
			method = line[v0:v1]
		default:
			return 0, false // another key, or one a second time
		}
		return v1, true
	})
	if !ok || skipSpace(line, end) != len(line) {
		return id, p, false
	}
	if string(version) != `"2.0"` || string(method) != `"tools/call"` || idTok == nil || !hasParams {
		return id, p, false
	}
	if id, ok = parseID(idTok, idKind); !ok {
		return id, p, false
	}
	p, ok = params.decode(names)
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
		if strictjson.UnmarshalLenient(tok, &v) != nil {
			return jsonrpc.ID{}, false
		}
		id, err := jsonrpc.MakeID(v)
		return id, err == nil
	}
	return jsonrpc.ID{}, false
}

// callParams are the members of a tools/call's parameters as callParams.scan finds them.
type callParams struct {
	name, args, meta []byte
	nameKind         int
}

// scan validates the parameters at b[i], which must be an object of the members the fast path takes
// (name, arguments, _meta; none twice), and returns the index just after them.
func (c *callParams) scan(b []byte, i int) (int, bool) {
	return objectAt(b, i, func(key []byte, v0 int) (int, bool) {
		v1, kind, ok := scanValue(b, v0)
		switch {
		case !ok:
			return 0, false
		case isKey(key, "name") && c.name == nil:
			c.name, c.nameKind = b[v0:v1], kind
		case isKey(key, "arguments") && c.args == nil:
			c.args = b[v0:v1]
		case isKey(key, "_meta") && c.meta == nil:
			c.meta = b[v0:v1]
		default:
			return 0, false
		}
		return v1, true
	})
}

// decode decodes the parameters scan found as parseFastParams does, or declines.
func (c *callParams) decode(names func([]byte) string) (p fastParams, ok bool) {
	name, args, meta := c.name, c.args, c.meta
	if name == nil || name[0] != '"' {
		return p, false
	}
	if c.nameKind == strPlain && names != nil {
		p.name = names(name[1 : len(name)-1])
	}
	if p.name == "" {
		if p.name, ok = decodeString(name, c.nameKind); !ok || p.name == "" {
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
		if meta[0] != '{' || strictjson.UnmarshalLenient(meta, &p.meta) != nil || !plainMeta(p.meta) {
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
	a := &plainAlloc{}
	res = &a.res
	res.Content = a.content[:0] // never nil, as the SDK decodes it
	var isError, structured, meta []byte
	hasContent, textsVerbatim := false, true
	var rawText string // raw as a string, once a plain text needs it
	// block decodes the content block at raw[i] (in the same pass as the result: the content array is
	// not scanned first to find its end).
	block := func(i int) (int, bool) {
		var typ []byte
		t0, t1, textKind := -1, -1, strPlain
		end, ok := objectAt(raw, i, func(key []byte, v0 int) (int, bool) {
			v1, kind, ok := scanValue(raw, v0)
			switch {
			case !ok:
				return 0, false
			case isKey(key, "type") && typ == nil:
				typ = raw[v0:v1]
			case isKey(key, "text") && t0 < 0 && kind >= 0:
				t0, t1, textKind = v0, v1, kind
			default:
				return 0, false
			}
			return v1, true
		})
		if !ok || string(typ) != `"text"` {
			return 0, false
		}
		var tc *mcp.TextContent
		if n := len(res.Content); n < len(a.blocks) {
			tc = &a.blocks[n]
		} else {
			tc = &mcp.TextContent{}
		}
		if t0 >= 0 {
			if text := raw[t0:t1]; textKind == strPlain && utf8.Valid(text) {
				if rawText == "" {
					rawText = string(raw) // one copy for all the plain texts
				}
				tc.Text = rawText[t0+1 : t1-1]
			} else if tc.Text, ok = decodeString(text, textKind); !ok {
				return 0, false
			}
			textsVerbatim = textsVerbatim && textKind != strUnicode
		} else {
			textsVerbatim = false // clients require text (the SDK writes "")
		}
		res.Content = append(res.Content, tc)
		return end, true
	}
	end, ok := objectAt(raw, 0, func(key []byte, v0 int) (int, bool) {
		if isKey(key, "content") && !hasContent {
			hasContent = true
			return arrayAt(raw, v0, block)
		}
		v1, _, ok := scanValue(raw, v0)
		switch {
		case !ok:
			return 0, false
		case isKey(key, "isError") && isError == nil:
			isError = raw[v0:v1]
		case isKey(key, "structuredContent") && structured == nil:
			structured = raw[v0:v1]
		case isKey(key, "_meta") && meta == nil:
			meta = raw[v0:v1]
		default:
			return 0, false
		}
		return v1, true
	})
	if !ok || skipSpace(raw, end) != len(raw) {
		return nil, false, false
	}
	switch string(isError) {
	case "", "false":
	case "true":
		res.IsError = true
	default:
		return nil, false, false
	}
	if structured != nil && string(structured) != "null" {
		if strictjson.UnmarshalLenient(structured, &res.StructuredContent) != nil {
			return nil, false, false
		}
	}
	if meta != nil {
		if meta[0] != '{' || strictjson.UnmarshalLenient(meta, &res.Meta) != nil {
			return nil, false, false
		}
	}
	verbatim = structured == nil && meta == nil && hasContent && textsVerbatim && // clients require content
		bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 && utf8.Valid(raw) && !lineSeparator(raw)
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
	end, ok := objectAt(b, 0, func(key []byte, v0 int) (int, bool) {
		v1, kind, ok := scanValue(b, v0)
		if !ok || !f(key, b[v0:v1], kind) {
			return 0, false
		}
		return v1, true
	})
	return ok && skipSpace(b, end) == len(b)
}

// scanValue validates the JSON value at b[i] and returns the index just after it, and its string kind
// when it is a string (-1 otherwise).
func scanValue(b []byte, i int) (int, int, bool) {
	if i < len(b) && b[i] == '"' {
		return skipString(b, i)
	}
	end, ok := skipValue(b, i, 1)
	return end, -1, ok
}
