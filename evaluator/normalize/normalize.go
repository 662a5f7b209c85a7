// Package normalize gives detectors one view of a text as an attacker's target would read it: encodings
// decoded (URL percent escapes, HTML character references, JSON and C-style backslash escapes), look-alike
// characters folded (full-width forms, compatibility forms such as mathematical letters, common Cyrillic
// and Greek homoglyphs of Latin letters), invisible characters dropped (zero-width spaces and joiners,
// soft hyphens, byte-order marks) and exotic spaces made plain. Decoding is repeated while it changes the
// text, at most MaxRounds times, so a payload encoded twice (%2527) is decoded too, and never more.
//
// Every byte of the normalised text remembers the byte of the original it came from, so a span found on
// the normalised text maps back to the original (Text.Original) for redaction.
//
// Case is not folded here: the detectors that use this package match case-insensitively already, and
// keeping the case keeps the normalised text as long as the decoded one.
package normalize

import (
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/width"
)

// MaxRounds bounds nested decoding: a text is decoded at most this many times.
const MaxRounds = 3

// Text is a normalised text and the map back to the original.
type Text struct {
	// S is the normalised text.
	S string
	// from[i] is the byte offset in the original of the character that produced S[i]; from[len(S)] is
	// the original's length. Nil when S is the original unchanged.
	from []int
	n    int // the original's length
}

// Changed reports whether normalisation changed the text.
func (t Text) Changed() bool { return t.from != nil }

// Original maps the span [start, end) of S to the smallest span of the original that holds every
// character it came from.
func (t Text) Original(start, end int) (int, int) {
	if t.from == nil {
		return start, end
	}
	if start < 0 {
		start = 0
	}
	if end > len(t.S) {
		end = len(t.S)
	}
	if start >= end {
		o := t.from[start]
		return o, o
	}
	lo, hi := t.from[start], t.from[start]
	for i := start; i < end; i++ {
		lo = min(lo, t.from[i])
		hi = max(hi, t.from[i])
	}
	// hi is where the last contributing character starts: extend to the end of that character's source,
	// which is the next larger source offset (or the end of the original).
	next := t.n
	for i := end; i < len(t.S)+1; i++ {
		if t.from[i] > hi {
			next = t.from[i]
			break
		}
	}
	return lo, next
}

// Needed reports whether s may change under String: it has a byte that starts an escape ('%', '&', '\\')
// or a non-ASCII byte. Plain ASCII text without them is its own normal form, found without allocating.
func Needed(s string) bool { return nextSpecial(s, 0) < len(s) }

// String normalises s (see the package documentation).
func String(s string) Text {
	if !Needed(s) || !hasWork(s) {
		return Text{S: s, n: len(s)}
	}
	cur := []byte(s)
	from := make([]int, len(s)+1)
	for i := range from {
		from[i] = i
	}
	changed := false
	for round := 0; round < MaxRounds; round++ {
		next, nfrom, ch := decodeOnce(cur, from)
		if !ch {
			break
		}
		changed = true
		cur, from = next, nfrom
	}
	next, nfrom, ch := foldRunes(cur, from)
	if ch {
		changed = true
		cur, from = next, nfrom
	}
	if !changed {
		return Text{S: s, n: len(s)}
	}
	return Text{S: string(cur), from: from, n: len(s)}
}

// hasWork reports whether s holds an escape that decodes or a non-ASCII character, without allocating:
// text with a stray '%' or '&' (a percentage, "R&D") is its own normal form and is not copied.
func hasWork(s string) bool {
	for i := nextSpecial(s, 0); i < len(s); i = nextSpecial(s, i+1) {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			return true
		case c == '%':
			if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) || i+5 < len(s) && (s[i+1] == 'u' || s[i+1] == 'U') {
				return true
			}
		case c == '&':
			if _, n := htmlRef([]byte(s[i:min(len(s), i+12)])); n > 0 {
				return true
			}
		case c == '\\':
			if _, n := backslash([]byte(s[i:min(len(s), i+6)])); n > 0 {
				return true
			}
		}
	}
	return false
}

// nextSpecial returns the offset of the first byte at or after i that may start an escape ('%', '&',
// '\\') or is not ASCII; len(s) when there is none. It tests eight bytes at a time (prose has few such
// bytes, so a 2 KB text is a few hundred word tests rather than 2,048 byte tests).
func nextSpecial(s string, i int) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if w&highs != 0 || hasZeroByte(w^('%'*ones)) || hasZeroByte(w^('&'*ones)) || hasZeroByte(w^('\\'*ones)) {
			if j := special(s, i, i+8); j >= 0 {
				return j
			}
		}
	}
	if j := special(s, i, len(s)); j >= 0 {
		return j
	}
	return len(s)
}

// special returns the offset of the first byte of s[from:to] that nextSpecial looks for, or -1.
func special(s string, from, to int) int {
	for i := from; i < to; i++ {
		if c := s[i]; c == '%' || c == '&' || c == '\\' || c >= utf8.RuneSelf {
			return i
		}
	}
	return -1
}

// hasZeroByte reports whether one of w's eight bytes is zero (w's bytes being ASCII, so no false alarm
// from a borrow).
func hasZeroByte(w uint64) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	return (w-ones)&^w&highs != 0
}

// out accumulates a rewritten text and, per byte, its source offset in the original.
type out struct {
	b    []byte
	from []int
}

func (o *out) byte1(c byte, src int) {
	o.b = append(o.b, c)
	o.from = append(o.from, src)
}

func (o *out) rune1(r rune, src int) {
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	for i := 0; i < n; i++ {
		o.byte1(buf[i], src)
	}
}

// decodeOnce decodes one layer of escapes: %XX (and %uXXXX), &#N; &#xN; and named HTML references,
// \uXXXX \xXX \n \r \t \0 and \/ backslash escapes. A malformed escape is kept as it is.
func decodeOnce(b []byte, from []int) ([]byte, []int, bool) {
	o := out{b: make([]byte, 0, len(b)), from: make([]int, 0, len(b)+1)}
	changed := false
	for i := 0; i < len(b); {
		src := from[i]
		switch b[i] {
		case '%':
			if i+2 < len(b) && isHex(b[i+1]) && isHex(b[i+2]) {
				o.byte1(unhex(b[i+1])<<4|unhex(b[i+2]), src)
				i += 3
				changed = true
				continue
			}
			if i+5 < len(b) && (b[i+1] == 'u' || b[i+1] == 'U') && allHex(b[i+2:i+6]) {
				o.rune1(rune(hexValue(b[i+2:i+6])), src)
				i += 6
				changed = true
				continue
			}
		case '&':
			if r, n := htmlRef(b[i:]); n > 0 {
				o.rune1(r, src)
				i += n
				changed = true
				continue
			}
		case '\\':
			if r, n := backslash(b[i:]); n > 0 {
				o.rune1(r, src)
				i += n
				changed = true
				continue
			}
		}
		o.byte1(b[i], src)
		i++
	}
	o.from = append(o.from, from[len(b)])
	return o.b, o.from, changed
}

// foldRunes folds look-alike characters to their ASCII form and drops invisible ones.
func foldRunes(b []byte, from []int) ([]byte, []int, bool) {
	o := out{b: make([]byte, 0, len(b)), from: make([]int, 0, len(b)+1)}
	changed := false
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			o.byte1(b[i], from[i])
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		src := from[i]
		switch f, ok := fold(r); {
		case !ok:
			o.b = append(o.b, b[i:i+size]...)
			for k := 0; k < size; k++ {
				o.from = append(o.from, from[i+k])
			}
		case f == "":
			changed = true
		default:
			for k := 0; k < len(f); k++ {
				o.byte1(f[k], src)
			}
			changed = true
		}
		i += size
	}
	o.from = append(o.from, from[len(b)])
	return o.b, o.from, changed
}

// fold returns the replacement of a non-ASCII rune ("" drops it) and whether it has one.
func fold(r rune) (string, bool) {
	if invisible(r) {
		return "", true
	}
	if space(r) {
		return " ", true
	}
	if c, ok := confusables[r]; ok {
		return string(c), true
	}
	if w := width.LookupRune(r).Narrow(); w != 0 && w < utf8.RuneSelf {
		return string(w), true
	}
	// Compatibility forms (mathematical letters, ligatures, circled and superscript digits) decompose to
	// ASCII under NFKC; a rune whose form is not all ASCII is kept as it is.
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	if norm.NFKC.IsNormal(buf[:n]) {
		return "", false
	}
	k := norm.NFKC.String(string(r))
	for i := 0; i < len(k); i++ {
		if k[i] >= utf8.RuneSelf {
			return "", false
		}
	}
	return k, true
}

func invisible(r rune) bool {
	switch r {
	case 0x00AD, 0x034F, 0x180E, 0x200B, 0x200C, 0x200D, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xFEFF:
		return true
	}
	return false
}

func space(r rune) bool {
	switch r {
	case 0x00A0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func allHex(b []byte) bool {
	for _, c := range b {
		if !isHex(c) {
			return false
		}
	}
	return true
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

func hexValue(b []byte) int {
	v := 0
	for _, c := range b {
		v = v<<4 | int(unhex(c))
	}
	return v
}

// backslash decodes a backslash escape at the start of b: \uXXXX, \xXX, \n, \r, \t, \0, \', \", \/ and
// \\; n is 0 when b starts with none.
func backslash(b []byte) (rune, int) {
	if len(b) < 2 {
		return 0, 0
	}
	switch b[1] {
	case 'u':
		if len(b) >= 6 && allHex(b[2:6]) {
			return rune(hexValue(b[2:6])), 6
		}
	case 'x':
		if len(b) >= 4 && allHex(b[2:4]) {
			return rune(hexValue(b[2:4])), 4
		}
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case '0':
		return 0, 2
	case '\'', '"', '/', '\\':
		return rune(b[1]), 2
	}
	return 0, 0
}

// htmlRef decodes an HTML character reference at the start of b (&#N;, &#xN;, or a common named one; the
// semicolon is required); n is 0 when b starts with none.
func htmlRef(b []byte) (rune, int) {
	end := -1
	for i := 1; i < len(b) && i < 12; i++ {
		if b[i] == ';' {
			end = i
			break
		}
	}
	if end < 2 {
		return 0, 0
	}
	body := b[1:end]
	if body[0] == '#' {
		digits := body[1:]
		base := 10
		if len(digits) > 0 && (digits[0] == 'x' || digits[0] == 'X') {
			digits, base = digits[1:], 16
		}
		if len(digits) == 0 || len(digits) > 7 {
			return 0, 0
		}
		v := 0
		for _, c := range digits {
			switch {
			case base == 10 && '0' <= c && c <= '9':
				v = v*10 + int(c-'0')
			case base == 16 && isHex(c):
				v = v<<4 | int(unhex(c))
			default:
				return 0, 0
			}
		}
		if v > utf8.MaxRune {
			return 0, 0
		}
		return rune(v), end + 1
	}
	if r, ok := named[string(body)]; ok {
		return r, end + 1
	}
	return 0, 0
}

// named are the HTML named references attackers use to hide syntax characters.
var named = map[string]rune{
	"amp": '&', "lt": '<', "gt": '>', "quot": '"', "apos": '\'', "nbsp": ' ', "sol": '/', "bsol": '\\',
	"semi": ';', "colon": ':', "lpar": '(', "rpar": ')', "equals": '=', "grave": '`', "verbar": '|',
	"vert": '|', "dollar": '$', "num": '#', "percnt": '%', "period": '.', "comma": ',', "excl": '!',
	"quest": '?', "commat": '@', "lsqb": '[', "rsqb": ']', "lcub": '{', "rcub": '}', "Tab": '\t',
	"NewLine": '\n', "ast": '*', "plus": '+', "minus": '-', "hyphen": '-',
}

// confusables are common non-Latin homoglyphs of Latin letters and ASCII punctuation (Cyrillic, Greek,
// Latin extensions, typographic quotes) that NFKC leaves as they are.
var confusables = map[rune]byte{
	// Cyrillic
	'а': 'a', 'в': 'b', 'е': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p', 'с': 'c', 'т': 't',
	'у': 'y', 'х': 'x', 'ѕ': 's', 'і': 'i', 'ј': 'j', 'ԁ': 'd', 'ɡ': 'g', 'һ': 'h', 'ԛ': 'q', 'ԝ': 'w',
	'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P', 'С': 'C', 'Т': 'T',
	'У': 'Y', 'Х': 'X', 'Ѕ': 'S', 'І': 'I', 'Ј': 'J',
	// Greek
	'α': 'a', 'ο': 'o', 'ν': 'v', 'ι': 'i', 'κ': 'k', 'ρ': 'p', 'τ': 't', 'υ': 'u', 'χ': 'x',
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O',
	'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X',
	// Latin look-alikes and punctuation
	'ı': 'i', 'ȷ': 'j', 'ℓ': 'l', 'ǀ': '|', '‘': '\'', '’': '\'', 'ʼ': '\'', '′': '\'', '“': '"', '”': '"',
	'″': '"', '‐': '-', '‑': '-', '‒': '-', '–': '-', '—': '-', '−': '-', '⁄': '/', '∕': '/', '＼': '\\',
	// Ideographic full stops, which URL parsers (IDNA) read as the dot between labels: "127。0。0。1"
	'。': '.', '｡': '.',
}

// ChangedPrefix returns, for the original text orig that t was made from, c with c[i] the number of bytes
// of S before i that normalisation changed: S[i] is unchanged when it is the byte of orig at from[i] and
// the next byte of S comes from the next byte of orig (and S[0] when it comes from orig[0]: a search
// sees the start of the text there). A stretch S[a:b] with c[b] == c[a] is the stretch
// of orig that starts at the byte S[a] came from, byte for byte; a search of S need not look again where
// it looked in orig. Nil when S is orig.
func (t Text) ChangedPrefix(orig string) []int32 {
	if t.from == nil {
		return nil
	}
	c := make([]int32, len(t.S)+1)
	for i := 0; i < len(t.S); i++ {
		c[i+1] = c[i]
		f := t.from[i]
		if t.from[i+1] != f+1 || f >= len(orig) || orig[f] != t.S[i] || i == 0 && f != 0 {
			c[i+1]++
		}
	}
	return c
}
