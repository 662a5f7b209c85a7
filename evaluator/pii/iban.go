package pii

// ibanLengths are the IBAN lengths of the SEPA countries and a few others (ISO 13616 registry). An
// IBAN of a country not listed is accepted at any length from 15 to 34 when its checksum holds.
var ibanLengths = map[string]int{
	"AD": 24, "AT": 20, "BE": 16, "BG": 22, "CH": 21, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "EE": 20,
	"ES": 24, "FI": 18, "FR": 27, "GB": 22, "GI": 23, "GR": 27, "HR": 21, "HU": 28, "IE": 22, "IS": 26,
	"IT": 27, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MT": 31, "NL": 18, "NO": 15, "PL": 28,
	"PT": 25, "RO": 24, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "VA": 22, "TR": 26, "SA": 24, "AE": 23,
	"IL": 23, "BR": 29, "UA": 29,
}

func isUpper(c byte) bool { return class[c]&clUpper != 0 }

func isLetter(c byte) bool { return class[c]&(clUpper|clLower) != 0 }

// upper is c in upper case (ASCII).
func upper(c byte) byte {
	if class[c]&clLower != 0 {
		return c - 'a' + 'A'
	}
	return c
}

// scanIBANs appends IBANs written compactly or in groups of four separated by single spaces: two
// letters, two check digits, then letters and digits, valid under the mod-97 check. Score 1. People
// write IBANs in lower case too ("de89 3704 ..."); such an IBAN must have its country's registered
// length, so that a lower-case word followed by digits needs both the length and the checksum to pass.
func scanIBANs(text string, out []Finding) []Finding {
	for i := 0; i+15 <= len(text); i++ {
		if c := text[i+3]; !isDigit(c) && !isLetter(c) {
			// No IBAN starts at i..i+3: from i or i+1 text[i+3] would be a check digit, from i+2 or
			// i+3 a country letter. Prose mostly skips four bytes at a time.
			i += 3
			continue
		}
		if !isLetter(text[i]) || !isLetter(text[i+1]) || !isDigit(text[i+2]) || !isDigit(text[i+3]) {
			continue
		}
		if i > 0 && isAlnum(text[i-1]) {
			continue
		}
		// Collect up to 34 letters and digits, remembering where each group may end.
		var chars [34]byte
		var ends [34]int // ends[n-1]: text offset after the n-th character
		n, j := 0, i
		lower := !isUpper(text[i]) || !isUpper(text[i+1])
		for j < len(text) && n < 34 {
			c := text[j]
			switch {
			case isLetter(c) || isDigit(c):
				chars[n] = upper(c)
				n++
				ends[n-1] = j + 1
				j++
			case c == ' ' && j+1 < len(text) && (isLetter(text[j+1]) || isDigit(text[j+1])) && n%4 == 0:
				j++
			default:
				j = len(text) // stop
			}
		}
		want := ibanLengths[string(chars[:2])]
		if lower && want == 0 {
			continue
		}
		for l := n; l >= 15; l-- {
			if want != 0 && l != want {
				continue
			}
			end := ends[l-1]
			if end < len(text) && isAlnum(text[end]) {
				continue
			}
			if mod97(chars[:l]) == 1 {
				out = append(out, Finding{Type: IBAN, Start: i, End: end, Score: 1})
				i = end - 1
				break
			}
		}
	}
	return out
}

// mod97 computes the ISO 7064 mod-97-10 remainder of an IBAN (first four characters moved to the end,
// letters as 10..35).
func mod97(s []byte) int {
	r := 0
	add := func(c byte) {
		if isDigit(c) {
			r = (r*10 + int(c-'0')) % 97
			return
		}
		v := int(c-'A') + 10
		r = (r*100 + v) % 97
	}
	for _, c := range s[4:] {
		add(c)
	}
	for _, c := range s[:4] {
		add(c)
	}
	return r
}
