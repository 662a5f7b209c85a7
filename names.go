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

// NormalizeAgentName trims and lower-cases an agent name and checks it: 1-255 characters of [a-z0-9._:-],
// starting with a letter or a digit.
func NormalizeAgentName(name string) (string, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" || len(n) > MaxNameLength {
		return "", errors.New("must be 1 to 255 characters long")
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if i == 0 && !alnum {
			return "", errors.New("must start with a letter or a digit")
		}
		if !alnum && c != '.' && c != '_' && c != ':' && c != '-' {
			return "", errors.New("may contain only letters, digits, '.', '_', ':' and '-'")
		}
	}
	return n, nil
}
