package pii

import (
	"regexp"
	"strings"
)

// The kinds of personal data the evaluator finds.
const (
	KindEmail = "email"
	KindPhone = "phone"
	KindIBAN  = "iban"
	KindCard  = "card"
)

// kinds lists every kind in detection order: the more specific patterns run first and blank out what
// they found, so that an IBAN's or a phone number's digits are not counted again as a card number.
var kinds = []string{KindIBAN, KindEmail, KindPhone, KindCard}

// detector finds candidates with a regular expression (RE2: linear time on any input) and keeps those
// that pass a check.
type detector struct {
	re    *regexp.Regexp
	valid func(candidate string) bool
}

var detectors = map[string]detector{
	KindEmail: {regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}`), nil},
	// International format only (a leading +): national numbers look like any other number.
	KindPhone: {regexp.MustCompile(`\+[1-9][0-9 ().-]{6,22}[0-9]`), validPhone},
	KindIBAN:  {regexp.MustCompile(`\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]){11,30}\b`), validIBAN},
	KindCard:  {regexp.MustCompile(`\b[0-9](?:[ -]?[0-9]){12,18}\b`), validCard},
}

// find counts the findings of each wanted kind in text.
func find(text string, want map[string]bool) map[string]int {
	counts := map[string]int{}
	buf := []byte(text)
	for _, k := range kinds {
		if !want[k] {
			continue
		}
		d := detectors[k]
		for _, loc := range d.re.FindAllIndex(buf, -1) {
			if d.valid != nil && !d.valid(string(buf[loc[0]:loc[1]])) {
				continue
			}
			counts[k]++
			for i := loc[0]; i < loc[1]; i++ {
				buf[i] = ' '
			}
		}
	}
	return counts
}

// digits returns the ASCII digits of s.
func digits(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// validPhone accepts 8 to 15 digits, the length range of E.164 numbers with their country code.
func validPhone(s string) bool {
	n := len(digits(s))
	return n >= 8 && n <= 15
}

// validCard accepts 13 to 19 digits that start like a payment card (2 to 6: Mastercard, Amex, Diners,
// JCB, Visa, Discover, UnionPay...) and pass the Luhn checksum, which catches every single-digit typo
// and so rejects nine in ten random digit strings.
func validCard(s string) bool {
	d := digits(s)
	if len(d) < 13 || len(d) > 19 || d[0] < '2' || d[0] > '6' {
		return false
	}
	return luhn(d)
}

// luhn reports whether the digit string passes the Luhn (mod 10) check.
func luhn(d string) bool {
	sum := 0
	double := false
	for i := len(d) - 1; i >= 0; i-- {
		n := int(d[i] - '0')
		if double {
			n *= 2
			if n > 9 {
				n -= 9
			}
		}
		sum += n
		double = !double
	}
	return sum%10 == 0
}

// ibanLengths are the IBAN lengths of common countries (ISO 13616 registry); other countries are
// accepted with any length from 15 to 34.
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AT": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29, "CH": 21, "CY": 28, "CZ": 24,
	"DE": 22, "DK": 18, "EE": 20, "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GI": 23, "GL": 18,
	"GR": 27, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IS": 26, "IT": 27, "KW": 30, "KZ": 20, "LB": 28,
	"LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "ME": 22, "MK": 19, "MT": 31, "MU": 30, "NL": 18,
	"NO": 15, "PL": 28, "PT": 25, "RO": 24, "SA": 24, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "TN": 24,
	"TR": 26, "UA": 29,
}

// validIBAN checks the country's length and the ISO 7064 mod-97 checksum (the remainder must be 1).
func validIBAN(s string) bool {
	s = strings.ReplaceAll(s, " ", "")
	if want, ok := ibanLengths[s[:2]]; ok && len(s) != want {
		return false
	}
	if len(s) < 15 || len(s) > 34 {
		return false
	}
	rearranged := s[4:] + s[:4]
	rem := 0
	for i := 0; i < len(rearranged); i++ {
		c := rearranged[i]
		switch {
		case c >= '0' && c <= '9':
			rem = (rem*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			rem = (rem*100 + int(c-'A') + 10) % 97
		default:
			return false
		}
	}
	return rem == 1
}
