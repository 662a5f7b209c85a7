package pii

import "slices"

// nationalCountries are the countries whose national phone formats are recognised (ISO 3166 codes);
// nationalMask holds their formats.
var nationalCountries = []string{"AU", "CA", "DE", "ES", "FR", "GB", "IN", "IT", "NL", "US"}

// nationalMask returns the countries (bit i: nationalCountries[i]) whose national format the digits of a
// number written without its international prefix fit. One pass over the formats, so that a number is
// checked against every selected country at once.
func nationalMask(d []byte) uint16 {
	var m uint16
	n := len(d)
	if nanp(d) {
		// North American Numbering Plan (US, CA): NXX NXX XXXX, optionally after a trunk "1".
		m |= countryBit("US") | countryBit("CA")
	}
	if n == 11 && d[0] == '0' && containsByte("12378", d[1]) {
		// United Kingdom: 11 digits from the trunk 0, geographic (01, 02, 03), mobile (07) or special (08).
		m |= countryBit("GB")
	}
	if n >= 10 && n <= 12 && d[0] == '0' && d[1] != '0' {
		// Germany: trunk 0, then 9 to 11 digits.
		m |= countryBit("DE")
	}
	if n == 10 && d[0] == '0' && d[1] != '0' {
		// France, Netherlands: 10 digits, 0 then 1-9.
		m |= countryBit("FR") | countryBit("NL")
	}
	if n == 9 && containsByte("6789", d[0]) {
		// Spain: 9 digits starting 6, 7, 8 or 9.
		m |= countryBit("ES")
	}
	if (n == 10 && d[0] == '3') || (n >= 9 && n <= 11 && d[0] == '0' && d[1] != '0') {
		// Italy: mobile 3xx xxx xxxx (10 digits) or landline 0 then 8 to 10 digits.
		m |= countryBit("IT")
	}
	if (n == 10 && containsByte("6789", d[0])) || (n == 11 && d[0] == '0' && containsByte("6789", d[1])) {
		// India: 10-digit mobile starting 6-9, optionally after the trunk 0.
		m |= countryBit("IN")
	}
	if n == 10 && d[0] == '0' && containsByte("23478", d[1]) {
		// Australia: 10 digits, 0 then 2, 3, 4, 7 or 8.
		m |= countryBit("AU")
	}
	return m
}

// countryBit is a country's bit in a nationalMask; 0 for a country without a national format.
func countryBit(country string) uint16 {
	if i := slices.Index(nationalCountries, country); i >= 0 {
		return 1 << i
	}
	return 0
}

func nanp(d []byte) bool {
	if len(d) == 11 && d[0] == '1' {
		d = d[1:]
	}
	return len(d) == 10 && d[0] >= '2' && d[3] >= '2'
}

// Countries lists the countries whose national phone formats are recognised, sorted.
func Countries() []string { return slices.Clone(nationalCountries) }

// callingCodes are ITU calling codes with the total digit counts (code included) of their E.164
// numbers; a code not listed is accepted with 8 to 15 digits at a lower score.
var callingCodes = map[string][2]int{
	"1": {11, 11}, "44": {11, 12}, "49": {8, 15}, "33": {11, 11}, "34": {11, 11}, "39": {8, 13},
	"31": {11, 11}, "91": {12, 12}, "61": {11, 11}, "81": {11, 12}, "55": {12, 13}, "52": {12, 12},
	"86": {12, 13}, "7": {11, 11}, "41": {11, 11}, "43": {8, 14}, "32": {10, 11}, "46": {9, 12},
	"47": {10, 10}, "45": {10, 10}, "48": {11, 11}, "351": {12, 12}, "353": {10, 12}, "27": {11, 11},
	"65": {10, 10}, "971": {11, 12}, "972": {11, 12},
}

// callingCodeRanges indexes callingCodes by the length of the code and its value: the digit counts of a
// code's numbers, or zero for a value that is not a listed code. A lookup is two array reads.
var callingCodeRanges = func() (t [4][][2]int) {
	t[1], t[2], t[3] = make([][2]int, 10), make([][2]int, 100), make([][2]int, 1000)
	for code, r := range callingCodes {
		t[len(code)][digitsValue([]byte(code))] = r
	}
	return t
}()

// digitsValue is the number that ASCII digits spell.
func digitsValue(d []byte) int {
	v := 0
	for _, c := range d {
		v = v*10 + int(c-'0')
	}
	return v
}

// phoneScore scores a digit run as a phone number.
func (e *Evaluator) phoneScore(num *number, d []byte, formatted bool) (float64, bool) {
	plus := num.plus
	var buf [maxNumberLen]byte
	if !plus && len(d) >= 10 && d[0] == '0' && d[1] == '0' && d[2] != '0' {
		// "0049 30 901820", "001-518-640-0854": the international prefix dialled from Europe and most of
		// the world, the same as "+".
		d, plus = d[2:], true
	}
	if plus && num.paren && num.ngroups >= 2 && num.groups[1] == 1 && int(num.groups[0]) < len(d) && d[num.groups[0]] == '0' {
		// "+41 (0)44 668 18 00": the national trunk 0 in parentheses is not dialled from abroad.
		k := copy(buf[:], d[:num.groups[0]])
		k += copy(buf[k:], d[num.groups[0]+1:])
		d = buf[:k]
	}
	if plus {
		if len(d) < 8 || len(d) > 15 {
			return 0, false
		}
		for l := 3; l >= 1; l-- {
			if r := callingCodeRanges[l][digitsValue(d[:l])]; r[0] != 0 {
				if len(d) >= r[0] && len(d) <= r[1] {
					return scorePhoneE164, true
				}
				return 0, false
			}
		}
		return scorePhoneE164Any, true
	}
	if nationalMask(d)&e.countryMask != 0 {
		if formatted && !num.plus && phoneGrouping(num.groups[:num.ngroups], num.digits[:num.n], num.paren, num.seps) {
			return scorePhoneGrouped, true
		}
		if formatted {
			return scorePhoneNational, true
		}
		return scorePhonePlain, true
	}
	if formatted && num.ngroups >= 2 && len(d) <= 12 && num.seps&sepDot == 0 && e.countryMask == 1<<len(nationalCountries)-1 && !thousandsGrouping(num.groups[:num.ngroups]) {
		// A local number in a format the national rules do not know ("467 3395", "(72) 754-186",
		// "0961-7596216"): only a context word ("phone", "call", "mobile", ...) makes it a finding.
		// Not when the config narrows the countries: then only their formats count, nor for a count
		// in thousands ("1 234 567").
		return scorePhoneLocal, true
	}
	return 0, false
}

// extensionEnd returns where a phone extension that follows a number at end stops ("x204", " ext. 12",
// " extension 7", "#33"), or end when there is none.
func extensionEnd(text string, end int) int {
	j := end
	if j < len(text) && text[j] == ' ' {
		j++
	}
	switch {
	case j < len(text) && (text[j] == 'x' || text[j] == 'X' || text[j] == '#'):
		j++
	case hasPrefixFold(text[j:], "extension"):
		j += len("extension")
	case hasPrefixFold(text[j:], "ext"):
		j += len("ext")
		if j < len(text) && text[j] == '.' {
			j++
		}
	default:
		return end
	}
	if j < len(text) && text[j] == ' ' {
		j++
	}
	k := j
	for k < len(text) && k-j < 6 && isDigit(text[k]) {
		k++
	}
	if k == j || (k < len(text) && isAlnum(text[k])) {
		return end
	}
	return k
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && equalFoldASCII(s[:len(prefix)], prefix)
}

// dateLike reports whether a number is written as a date (2024-03-15, 15.03.2024, 03-15-2024, 20240315 1030): a date,
// possibly followed by an hour ("2024-03-15 10:30" reads as the digits 2024 03 15 10), is not a phone.
func dateLike(num *number) bool {
	if num.ngroups < 2 || num.plus || num.paren {
		return false
	}
	g := num.groups[:num.ngroups]
	d := num.digits[:num.n]
	val := func(at, n int) int { return digitsValue(d[at : at+n]) }
	switch {
	case g[0] == 8 && (d[0] == '1' || d[0] == '2'): // "20240315 1030": a compact date, then an hour
		m, day := val(4, 2), val(6, 2)
		return m >= 1 && m <= 12 && day >= 1 && day <= 31
	case len(g) < 3:
		return false
	case g[0] == 4 && g[1] <= 2 && g[2] <= 2: // year, month, day
		m, day := val(4, int(g[1])), val(4+int(g[1]), int(g[2]))
		return m >= 1 && m <= 12 && day >= 1 && day <= 31
	case g[0] <= 2 && g[1] <= 2 && g[2] == 4: // day and month, then the year
		a, b := val(0, int(g[0])), val(int(g[0]), int(g[1]))
		return a >= 1 && a <= 31 && b >= 1 && b <= 31 && (a <= 12 || b <= 12)
	}
	return false
}
