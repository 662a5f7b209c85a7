package pii

import "slices"

// nationalCountries are the countries whose national phone formats are recognised (ISO 3166 codes);
// nationalMatch holds the format of each.
var nationalCountries = []string{"AU", "CA", "DE", "ES", "FR", "GB", "IN", "IT", "NL", "US"}

// nationalMatch checks the digits of a number written without its international prefix against the
// national format of a country. It is a switch rather than a table of functions so that the digits
// stay on the caller's stack.
func nationalMatch(country string, d []byte) bool {
	switch country {
	case "US", "CA":
		// North American Numbering Plan: NXX NXX XXXX, optionally after a trunk "1".
		return nanp(d)
	case "GB":
		// United Kingdom: 11 digits from the trunk 0, geographic (01, 02, 03), mobile (07) or special (08).
		return len(d) == 11 && d[0] == '0' && containsByte("12378", d[1])
	case "DE":
		// Germany: trunk 0, then 9 to 11 digits.
		return len(d) >= 10 && len(d) <= 12 && d[0] == '0' && d[1] != '0'
	case "FR", "NL":
		// France, Netherlands: 10 digits, 0 then 1-9.
		return len(d) == 10 && d[0] == '0' && d[1] != '0'
	case "ES":
		// Spain: 9 digits starting 6, 7, 8 or 9.
		return len(d) == 9 && containsByte("6789", d[0])
	case "IT":
		// Italy: mobile 3xx xxx xxxx (10 digits) or landline 0 then 8 to 10 digits.
		return (len(d) == 10 && d[0] == '3') || (len(d) >= 9 && len(d) <= 11 && d[0] == '0' && d[1] != '0')
	case "IN":
		// India: 10-digit mobile starting 6-9, optionally after the trunk 0.
		return (len(d) == 10 && containsByte("6789", d[0])) || (len(d) == 11 && d[0] == '0' && containsByte("6789", d[1]))
	case "AU":
		// Australia: 10 digits, 0 then 2, 3, 4, 7 or 8.
		return len(d) == 10 && d[0] == '0' && containsByte("23478", d[1])
	}
	return false
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

// phoneScore scores a digit run as a phone number.
func (e *Evaluator) phoneScore(num *number, d []byte, formatted bool) (float64, bool) {
	if num.plus {
		if len(d) < 8 || len(d) > 15 {
			return 0, false
		}
		for l := 3; l >= 1; l-- {
			if r, ok := callingCodes[string(d[:l])]; ok {
				if len(d) >= r[0] && len(d) <= r[1] {
					return scorePhoneE164, true
				}
				return 0, false
			}
		}
		return scorePhoneE164Any, true
	}
	for _, c := range e.phoneCountries {
		if nationalMatch(c, d) {
			if formatted {
				return scorePhoneNational, true
			}
			return scorePhonePlain, true
		}
	}
	return 0, false
}
