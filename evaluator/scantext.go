package evaluator

import "strings"

// ScanText is the text a detector (pii, secrets, list) searches in d: the string itself when a string was
// selected, else the JSON text form with each escape sequence decoded in place and padded with spaces to
// its length, so that offsets (spans, finding positions) stay those of d.Text. In the JSON text a
// newline before a card number reads "\n4111...", whose "n" glued to the digits made it part of a word:
// {"note":"card\n4111 1111 1111 1111"} was not found, nor an AWS key or a listed phrase after a tab or a
// newline. Decoded, "\n" is a newline followed by a space, a word boundary as in the string itself. An
// escape of a character that is not ASCII (\u2028, \ufffd for invalid UTF-8) becomes spaces only.
func ScanText(d *Data) string {
	if _, ok := d.Value.(string); ok || strings.IndexByte(d.Text, '\\') < 0 {
		return d.Text
	}
	b := []byte(d.Text)
	for i := 0; i+1 < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		n, c := 2, byte(' ')
		switch e := b[i+1]; e {
		case 'n':
			c = '\n'
		case 't':
			c = '\t'
		case 'r':
			c = '\r'
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case '"', '\\', '/':
			c = e
		case 'u':
			n = 6
			if i+6 <= len(b) {
				if v, ok := hex4(b[i+2 : i+6]); ok && v < 0x80 {
					c = byte(v)
				}
			}
		}
		end := min(i+n, len(b))
		b[i] = c
		for k := i + 1; k < end; k++ {
			b[k] = ' '
		}
		i = end - 1
	}
	return string(b)
}

// hex4 reads four hexadecimal digits.
func hex4(h []byte) (rune, bool) {
	var v rune
	for _, c := range h {
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			v = v<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}
