//go:build cgo

package sqlguard

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// pgDoc is pg_query's JSON parse tree read into one flat slice: each value records where its text
// lies in src, its first child and its next sibling. The slice holds no pointers (the GC does not
// scan it) and strings are cut from src when read, unescaped only when they hold an escape.
//
// Why JSON and not pg_query's protobuf: libpg_query writes the protobuf with protobuf-c, which visits
// every one of the ~270 fields of the Node oneof for each node, twice; for the typical query of the
// benchmarks that is about 940,000 instructions against 165,000 for the JSON (callgrind), and the Go
// side then decoded the protobuf into a tree of allocated messages (another 290,000).
type pgDoc struct {
	src  string
	vals []pgVal
}

type pgKind uint8

const (
	pgObject pgKind = iota + 1
	pgArray
	pgString
	pgNumber // and true, false, null: a bare word, kept as text
)

// pgVal is one JSON value. key is the member name when the value is an object member; for a string
// the text span excludes the quotes, and escaped records whether it holds a backslash.
type pgVal struct {
	keyOff, keyLen int32
	off, n         int32
	first, next    int32 // child and sibling indexes, -1 when none
	kind           pgKind
	escaped        bool
}

const pgNone = -1

var errPGJSON = errors.New("sql: unreadable parse tree")

// readPGJSON reads pg_query's JSON. It is not a general JSON reader: it accepts what pg_query writes
// (objects, arrays, strings with the escapes _outToken writes, numbers and bare words, no white space
// outside strings) and rejects the rest with an error, never a panic. Members named "location" (byte
// offsets, which no fact uses) are skipped.
func readPGJSON(src string) (*pgDoc, error) {
	if len(src) > 1<<30 || !utf8.ValidString(src) {
		// The protobuf decoder refused invalid UTF-8 in a name or a string constant; keep that answer.
		return nil, errPGJSON
	}
	// Every value but the root follows a '{', '[' or ',': sized once, the slice never grows.
	n := 1 + strings.Count(src, "{") + strings.Count(src, "[") + strings.Count(src, ",")
	r := pgReader{src: src, vals: make([]pgVal, 0, n)}
	root, err := r.value()
	if err != nil {
		return nil, err
	}
	if r.pos != len(src) || root != 0 {
		return nil, errPGJSON
	}
	return &pgDoc{src: src, vals: r.vals}, nil
}

type pgReader struct {
	src  string
	vals []pgVal
	pos  int
}

// value reads one value at pos and returns its index.
func (r *pgReader) value() (int32, error) {
	src := r.src
	if r.pos >= len(src) {
		return 0, errPGJSON
	}
	idx := int32(len(r.vals))
	r.vals = append(r.vals, pgVal{first: pgNone, next: pgNone, off: int32(r.pos)})
	switch c := src[r.pos]; c {
	case '{', '[':
		return idx, r.container(idx, c)
	case '"':
		off, n, escaped, err := r.str()
		if err != nil {
			return 0, err
		}
		v := &r.vals[idx]
		v.kind, v.off, v.n, v.escaped = pgString, off, n, escaped
	default:
		start := r.pos
		r.word()
		if r.pos == start {
			return 0, errPGJSON
		}
		v := &r.vals[idx]
		v.kind, v.off, v.n = pgNumber, int32(start), int32(r.pos-start)
	}
	return idx, nil
}

// word skips a number or bare word at pos.
func (r *pgReader) word() {
	src := r.src
	for r.pos < len(src) {
		if c := src[r.pos]; !isWordByte(c) && c != '-' && c != '.' && c != '+' {
			return
		}
		r.pos++
	}
}

// container reads the object or array opened by c at pos into value idx.
func (r *pgReader) container(idx int32, c byte) error {
	src := r.src
	kind, closer := pgObject, byte('}')
	if c == '[' {
		kind, closer = pgArray, ']'
	}
	r.vals[idx].kind = kind
	r.pos++
	if r.pos < len(src) && src[r.pos] == closer {
		r.pos++
		return nil
	}
	prev := int32(pgNone)
	for {
		var keyOff, keyLen int32
		if kind == pgObject {
			off, n, escaped, err := r.str()
			if err != nil || escaped || r.pos >= len(src) || src[r.pos] != ':' {
				return errPGJSON // pg_query's member names are identifiers
			}
			r.pos++
			keyOff, keyLen = off, n
		}
		if keyLen == 8 && src[keyOff:keyOff+8] == "location" && r.pos < len(src) && (src[r.pos] == '-' || '0' <= src[r.pos] && src[r.pos] <= '9') {
			r.word()
		} else {
			child, err := r.value()
			if err != nil {
				return err
			}
			v := &r.vals[child]
			v.keyOff, v.keyLen = keyOff, keyLen
			if prev == pgNone {
				r.vals[idx].first = child
			} else {
				r.vals[prev].next = child
			}
			prev = child
		}
		if r.pos >= len(src) {
			return errPGJSON
		}
		switch src[r.pos] {
		case ',':
			r.pos++
		case closer:
			r.pos++
			return nil
		default:
			return errPGJSON
		}
	}
}

// str reads a quoted string at pos and returns the span between the quotes.
func (r *pgReader) str() (off, n int32, escaped bool, err error) {
	src := r.src
	if r.pos >= len(src) || src[r.pos] != '"' {
		return 0, 0, false, errPGJSON
	}
	start := r.pos + 1
	// A plain loop: most strings are member names of a few bytes, shorter than IndexByte pays off at.
	for i := start; i < len(src); i++ {
		switch src[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			r.pos = i + 1
			return int32(start), int32(i - start), escaped, nil
		}
	}
	return 0, 0, false, errPGJSON
}

// key is the member name of value i ("" for an array element or the root).
func (d *pgDoc) key(i int32) string {
	v := &d.vals[i]
	return d.src[v.keyOff : v.keyOff+v.keyLen]
}

// text is the value of a string (unescaped) or the text of a number or bare word; "" otherwise.
func (d *pgDoc) text(i int32) string {
	if i == pgNone {
		return ""
	}
	v := &d.vals[i]
	switch v.kind {
	case pgString:
		s := d.src[v.off : v.off+v.n]
		if v.escaped {
			return unescapePG(s)
		}
		return s
	case pgNumber:
		return d.src[v.off : v.off+v.n]
	}
	return ""
}

// member finds the member named name of object i (pgNone when i is not an object or lacks it).
func (d *pgDoc) member(i int32, name string) int32 {
	if i == pgNone || d.vals[i].kind != pgObject {
		return pgNone
	}
	for c := d.vals[i].first; c != pgNone; c = d.vals[c].next {
		if d.key(c) == name {
			return c
		}
	}
	return pgNone
}

// node reads value i as a wrapped parse node, {"TypeName":{fields}}: its type and its fields object.
// A value that is not one (an unwrapped message such as a RangeVar field, an empty {}, a scalar)
// answers "" and pgNone.
func (d *pgDoc) node(i int32) (string, int32) {
	if i == pgNone || d.vals[i].kind != pgObject {
		return "", pgNone
	}
	c := d.vals[i].first
	if c == pgNone || d.vals[c].next != pgNone || d.vals[c].kind != pgObject {
		return "", pgNone
	}
	k := d.key(c)
	if k == "" || k[0] < 'A' || k[0] > 'Z' {
		return "", pgNone
	}
	return k, c
}

// nodeOf returns the fields of value i when it is a wrapped node of type typ, else pgNone.
func (d *pgDoc) nodeOf(i int32, typ string) int32 {
	if t, f := d.node(i); t == typ {
		return f
	}
	return pgNone
}

// unescapePG undoes _outToken's escapes: \" \\ \b \f \n \r \t and \uXXXX.
func unescapePG(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			if i+4 < len(s) {
				if r, ok := hex4(s[i+1 : i+5]); ok {
					b.WriteRune(r)
					i += 4
					continue
				}
			}
			b.WriteByte('u')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func hex4(s string) (rune, bool) {
	var r rune
	for i := 0; i < 4; i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
