package evaluator

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// foldRune maps r to the representative of its case class: ASCII letters to lower case, other runes
// through upper then lower case, which merges variants such as σ/ς/Σ, s/ſ and k/K (Kelvin sign).
// The list evaluator folds its values with it once at compile time and each text rune as it reads.
func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	return unicode.ToLower(unicode.ToUpper(r))
}

// foldString applies foldRune to every rune of s.
func foldString(s string) string { return strings.Map(foldRune, s) }

// isWordRune reports whether r is a word character for whole-word matching: a Unicode letter or digit,
// or an underscore.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || ('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// isASCII reports whether s has only ASCII bytes.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
