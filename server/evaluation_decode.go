package server

import (
	"net/http"
	"strconv"
	"sync"
	"unicode/utf8"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/internal/jsonstr"
	"github.com/guardrail-control/guard/server/observability"
	"github.com/guardrail-control/guard/server/problem"
)

// Decoding the body of POST /evaluation with encoding/json was about 40 % of the request's CPU: the
// decoder scans the body twice (once to find the value's end, once to decode it) and the duplicate-key
// check a third time. The body of a well-behaved SDK — the fields of evaluationRequest spelled exactly,
// no key repeated, plain JSON values in the step — is read here in a single pass that builds the same
// values encoding/json builds (objects as map[string]any, arrays as []any, numbers as float64). Every
// body this reader does not fully vouch for (a syntax error, an unknown or differently cased field, a
// repeated key, a type error, a number out of float64's range, invalid UTF-8, a lone surrogate escape,
// deep nesting) is decoded again by problem.DecodeLenientBytes, the plain path, which gives the answer
// and the error it always gave. So the fast path can only accept, never refuse: a body it accepts is
// one the plain path accepts with the same result and no ignored field (proven by
// TestEvaluationFastDecodeMatchesPlain and FuzzEvaluationFastDecode).

// fastMaxDepth is the nesting (objects and arrays, the body itself being level 1) beyond which the
// fast reader gives the body to the plain path. It only bounds the fast reader's recursion: the plain
// path applies encoding/json's own limit.
const fastMaxDepth = 128

// decodeEvaluation reads and decodes the body of POST /evaluation into req, with the rules of
// problem.DecodeLenient: unknown fields are skipped and counted, duplicate keys and invalid JSON refused.
func (s *Server) decodeEvaluation(w http.ResponseWriter, r *http.Request, req *evaluationRequest) error {
	bp := bodyPool.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= 64<<10 {
			bodyPool.Put(bp)
		}
	}()
	b, err := problem.AppendBody((*bp)[:0], r)
	*bp = b
	if err != nil {
		return err
	}
	// Nothing decoded keeps a reference to b (strings are copied), so the buffer is recycled.
	if decodeEvaluationFast(b, req) {
		return nil
	}
	*req = evaluationRequest{} // the fast reader may have filled part of it
	ig, err := problem.DecodeLenientBytes(b, req)
	if err != nil {
		return err
	}
	observability.NoteIgnored(s.cfg.obs.metrics, s.log, w, r, ig)
	return nil
}

// bodyPool recycles the buffers evaluation bodies are read into.
var bodyPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// decodeEvaluationFast decodes b into req and reports true when b is a body it fully understands;
// false means "ask the plain path", with req in an unspecified state.
func decodeEvaluationFast(b []byte, req *evaluationRequest) bool {
	p := fastReader{b: b}
	p.space()
	if !p.request(req) {
		return false
	}
	p.space()
	return p.i == len(p.b)
}

// fastReader is a cursor over a JSON text; every method returns false at the first byte it does not
// accept, and the caller gives up.
type fastReader struct {
	b []byte
	i int
}

// space skips JSON white space.
func (p *fastReader) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// consume skips white space and then c, reporting whether c was there.
func (p *fastReader) consume(c byte) bool {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// peek skips white space and returns the next byte (0 at the end).
func (p *fastReader) peek() byte {
	p.space()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// members reads the members of an object whose '{' is consumed, calling member with each key (the
// reader then at its value); it stops at the first false.
func (p *fastReader) members(member func(key string) bool) bool {
	if p.consume('}') {
		return true
	}
	for {
		if p.peek() != '"' {
			return false
		}
		key, ok := p.str()
		if !ok || !p.consume(':') || !member(key) {
			return false
		}
		if p.consume(',') {
			continue
		}
		return p.consume('}')
	}
}

// request reads the body object into req. Each field is taken once (a second one is a repeated key);
// a key that is not exactly a field's name is left to the plain path, which matches names
// case-insensitively and reports unknown fields.
func (p *fastReader) request(req *evaluationRequest) bool {
	if !p.consume('{') {
		return false
	}
	var seen seenKeys
	once := seen.first
	return p.members(func(key string) bool {
		switch key {
		case "agent_name":
			return once(1) && p.nullableString(&req.AgentName)
		case "stage":
			return once(2) && p.nullableString(&req.Stage, "pre", "post")
		case "target_type":
			return once(4) && p.optionalString(&req.TargetType)
		case "target_id":
			return once(8) && p.optionalString(&req.TargetID)
		case "step":
			if !once(16) {
				return false
			}
			if p.null() {
				req.Step = nil
				return true
			}
			req.Step = new(guard.Step)
			return p.step(req.Step)
		}
		return false
	})
}

// step reads a step object.
func (p *fastReader) step(st *guard.Step) bool {
	if !p.consume('{') {
		return false
	}
	var seen seenKeys
	once := seen.first
	return p.members(func(key string) bool {
		var ok bool
		switch key {
		case "type":
			return once(1) && p.nullableString(&st.Type, "llm", "tool")
		case "name":
			return once(2) && p.nullableString(&st.Name)
		case "input":
			if !once(4) {
				return false
			}
			st.Input, ok = p.value(3)
			return ok
		case "output":
			if !once(8) {
				return false
			}
			st.Output, ok = p.value(3)
			return ok
		case "context":
			if !once(16) {
				return false
			}
			if p.null() {
				st.Context = nil
				return true
			}
			if !p.consume('{') {
				return false
			}
			st.Context, ok = p.object(3)
			return ok
		}
		return false
	})
}

// null consumes a null literal if one is next.
func (p *fastReader) null() bool {
	p.space()
	if len(p.b)-p.i >= 4 && string(p.b[p.i:p.i+4]) == "null" {
		p.i += 4
		return true
	}
	return false
}

// nullableString reads a string into dst; null leaves dst as it is, as encoding/json does. A string
// equal to one of common is stored as that constant (the same value, without allocating a copy).
func (p *fastReader) nullableString(dst *string, common ...string) bool {
	if p.null() {
		return true
	}
	if p.peek() != '"' {
		return false
	}
	for _, c := range common {
		if n := len(c) + 2; len(p.b)-p.i > n && p.b[p.i+n-1] == '"' && string(p.b[p.i+1:p.i+n-1]) == c {
			p.i += n
			*dst = c
			return true
		}
	}
	s, ok := p.str()
	*dst = s
	return ok
}

// optionalString reads a string into a new *string; null makes dst nil.
func (p *fastReader) optionalString(dst **string) bool {
	if p.null() {
		*dst = nil
		return true
	}
	if p.peek() != '"' {
		return false
	}
	s, ok := p.str()
	*dst = &s
	return ok
}

// value reads any JSON value as encoding/json decodes it into an interface; depth is the level an
// object or array there would be at.
func (p *fastReader) value(depth int) (any, bool) {
	switch c := p.peek(); {
	case c == '"':
		return p.str()
	case c == '{':
		if depth > fastMaxDepth {
			return nil, false
		}
		p.i++
		return p.object(depth)
	case c == '[':
		if depth > fastMaxDepth {
			return nil, false
		}
		p.i++
		return p.array(depth)
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	}
	return nil, false
}

// literal consumes lit (true, false, null).
func (p *fastReader) literal(lit string) bool {
	if len(p.b)-p.i >= len(lit) && string(p.b[p.i:p.i+len(lit)]) == lit {
		p.i += len(lit)
		return true
	}
	return false
}

// object reads the members of an object whose '{' is consumed into a map; a repeated key gives up.
func (p *fastReader) object(depth int) (map[string]any, bool) {
	m := make(map[string]any)
	ok := p.members(func(key string) bool {
		if _, dup := m[key]; dup {
			return false
		}
		v, ok := p.value(depth + 1)
		m[key] = v
		return ok
	})
	return m, ok
}

// array reads the elements of an array whose '[' is consumed; an empty array is an empty, non-nil
// slice, as encoding/json makes it.
func (p *fastReader) array(depth int) ([]any, bool) {
	a := make([]any, 0)
	if p.consume(']') {
		return a, true
	}
	for {
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		if p.consume(',') {
			continue
		}
		return a, p.consume(']')
	}
}

// number reads a JSON number (RFC 8259 grammar) as a float64; a number float64 cannot hold is left to
// the plain path (encoding/json refuses it as a type error).
func (p *fastReader) number() (any, bool) {
	b, start := p.b, p.i
	i := start
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return nil, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return nil, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return nil, false
		}
	}
	f, err := strconv.ParseFloat(string(b[start:i]), 64)
	if err != nil {
		return nil, false
	}
	p.i = i
	return f, true
}

// str reads the string whose opening quote is next. It accepts valid UTF-8 and the escapes of RFC 8259;
// invalid UTF-8 and lone surrogate escapes, which encoding/json replaces with U+FFFD, are left to the
// plain path.
func (p *fastReader) str() (string, bool) {
	b := p.b
	start := p.i + 1
	i := start
	escaped, high := false, false
	for ; i < len(b); i++ {
		c := b[i]
		if c == '"' {
			break
		}
		switch {
		case c == '\\':
			escaped = true
			i++ // the escaped byte is never the closing quote
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			high = true
		}
	}
	if i >= len(b) {
		return "", false
	}
	raw := b[start:i]
	if high && !utf8.Valid(raw) {
		return "", false
	}
	p.i = i + 1
	if !escaped {
		return string(raw), true
	}
	return jsonstr.Unescape(raw)
}

// seenKeys records which of an object's known keys were read (one bit each), so that a repeated key sends
// the body to the plain path, which refuses it.
type seenKeys uint8

// first marks bit and reports whether it was not marked yet.
func (s *seenKeys) first(bit uint8) bool {
	if *s&seenKeys(bit) != 0 {
		return false
	}
	*s |= seenKeys(bit)
	return true
}
