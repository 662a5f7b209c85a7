package guard

import (
	"errors"
	"strings"
)

// MaxNameLength bounds control and agent names.
const MaxNameLength = 255

// ValidateControlName checks a control name: 1-255 characters of [A-Za-z0-9_-], starting with a letter or
// a digit.
func ValidateControlName(name string) error {
	if name == "" || len(name) > MaxNameLength {
		return errors.New("must be 1 to 255 characters long")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if i == 0 && !alnum {
			return errors.New("must start with a letter or a digit")
		}
		if !alnum && c != '_' && c != '-' {
			return errors.New("may contain only letters, digits, '_' and '-'")
		}
	}
	return nil
}

// NormalizeAgentName trims ASCII white space, checks and lower-cases an agent name: 1-255 characters
// of [A-Za-z0-9._:-], starting with a letter or a digit, returned with A-Z lower-cased.
//
// The alphabet is checked before case folding, and folding is ASCII only: a character outside it is
// refused, never mapped onto an ASCII one. Unicode lower-casing would map the Kelvin sign (U+212A) onto
// "k" and "İ" (U+0130) onto "i" plus a combining dot, so that two spellings would name one agent; NFKC
// would do the same for full-width letters. Every name is therefore written one way only, in ASCII.
func NormalizeAgentName(name string) (string, error) {
	n := strings.Trim(name, asciiSpace)
	if n == "" || len(n) > MaxNameLength {
		return "", errors.New("must be 1 to 255 characters long")
	}
	lower := true
	for i := 0; i < len(n); i++ {
		c := n[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if i == 0 && !alnum {
			return "", errors.New("must start with an ASCII letter or digit")
		}
		if !alnum && c != '.' && c != '_' && c != ':' && c != '-' {
			return "", errors.New("may contain only ASCII letters, digits, '.', '_', ':' and '-'")
		}
		lower = lower && !(c >= 'A' && c <= 'Z')
	}
	if lower {
		return n, nil
	}
	return asciiLower(n), nil
}

// NormalizeAgentNameFilter checks a search text for agent names (the substring filter of GET /agents):
// empty, or characters of the agent name alphabet only (a text with any other character could match no
// agent, and folding it could match the wrong one). It returns the text trimmed and ASCII lower-cased.
func NormalizeAgentNameFilter(text string) (string, error) {
	n := strings.Trim(text, asciiSpace)
	if len(n) > MaxNameLength {
		return "", errors.New("must be at most 255 characters long")
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && c != '.' && c != '_' && c != ':' && c != '-' {
			return "", errors.New("may contain only ASCII letters, digits, '.', '_', ':' and '-'")
		}
	}
	return asciiLower(n), nil
}

// asciiSpace is the white space trimmed from agent names: ASCII only, so that no Unicode space is
// silently dropped (it is refused as outside the alphabet instead).
const asciiSpace = " \t\n\v\f\r"

// asciiLower lower-cases A-Z and leaves every other byte alone.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}
