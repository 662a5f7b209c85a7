package pii

import "strings"

// defaultContext are the built-in context words per entity type (lower case): one of them within
// contextBefore bytes before a finding or contextAfter bytes after it raises the finding's score by
// contextBoost, as Presidio's context enhancer does.
var defaultContext = map[string][]string{
	Email:      {"email", "e-mail", "mail", "contact", "address"},
	Phone:      {"phone", "telephone", "tel", "mobile", "cell", "call", "fax", "whatsapp", "sms", "contact", "desk", "office", "dial", "landline", "answering", "messages"},
	CreditCard: {"card", "credit", "debit", "visa", "mastercard", "amex", "payment", "cc"},
	IBAN:       {"iban", "bank", "account", "transfer", "wire", "sepa"},
	USSSN:      {"ssn", "social security", "social", "security number", "taxpayer"},
	IPAddress:  {"ip", "address", "host", "server", "client", "addr"},
}

// The context window around a finding.
const (
	contextBefore = 48
	contextAfter  = 24
)

// hasContext reports whether one of the entity's context words occurs, as a whole word and ASCII
// case-insensitively, near the finding. Single words are compared with the words of the window (one
// pass); words holding a space or a hyphen ("social security", "e-mail") are searched as phrases.
func (e *Evaluator) hasContext(text string, f Finding) bool {
	words := e.context[f.Type]
	if len(words) == 0 {
		return false
	}
	lo, hi := max(0, f.Start-contextBefore), min(len(text), f.End+contextAfter)
	for _, span := range [2][2]int{{lo, f.Start}, {f.End, hi}} {
		seg := text[span[0]:span[1]]
		for i := 0; i < len(seg); {
			if !isAlnum(seg[i]) {
				i++
				continue
			}
			j := i
			for j < len(seg) && isAlnum(seg[j]) {
				j++
			}
			tok := seg[i:j]
			for _, w := range words {
				if len(w) == len(tok) && equalFoldASCII(tok, w) {
					return true
				}
			}
			i = j
		}
		for _, w := range words {
			if strings.ContainsAny(w, " -") && containsWordFold(seg, w) {
				return true
			}
		}
	}
	return false
}

// equalFoldASCII reports whether s equals the lower-case word w, ASCII case-insensitively.
func equalFoldASCII(s, w string) bool {
	for i := 0; i < len(w); i++ {
		if lowerByte(s[i]) != w[i] {
			return false
		}
	}
	return true
}

// Byte classes, looked up in one table: the scanners test every byte of the text.
const (
	clDigit uint8 = 1 << iota
	clUpper
	clLower
	clHex
	clNumberLead // a digit, "+" or "(": where a number may start
	clIPMark     // "." or ":": what an IP address holds at least twice
)

var class = func() (t [256]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] |= clDigit | clHex
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] |= clUpper
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] |= clLower
	}
	for _, c := range "abcdefABCDEF" {
		t[c] |= clHex
	}
	for _, c := range "0123456789+(" {
		t[c] |= clNumberLead
	}
	t['.'] |= clIPMark
	t[':'] |= clIPMark
	return t
}()

func isAlnum(c byte) bool { return class[c]&(clDigit|clUpper|clLower) != 0 }

func isDigit(c byte) bool { return class[c]&clDigit != 0 }

func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// containsWordFold reports whether the lower-case word w occurs in s with no letter or digit on either
// side, comparing ASCII letters case-insensitively.
func containsWordFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if lowerByte(s[i]) != w[0] {
			continue
		}
		j := 1
		for j < len(w) && lowerByte(s[i+j]) == w[j] {
			j++
		}
		if j < len(w) {
			continue
		}
		if (i == 0 || !isAlnum(s[i-1])) && (i+len(w) == len(s) || !isAlnum(s[i+len(w)])) {
			return true
		}
	}
	return false
}
