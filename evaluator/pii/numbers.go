package pii

// Base scores of number findings. A checksum makes a card certain; an SSN or a phone number is only a
// shape, so they start below the default min_confidence unless formatted (SSN) or international
// (phone), and a context word lifts them (Presidio's scheme).
const (
	scoreCard          = 1.0
	scoreCardWeak      = 0.3 // Maestro, JCB outside its assigned range: a context word needed
	scoreSSNFormatted  = 0.5
	scoreSSNPlain      = 0.3
	scorePhoneE164     = 0.7
	scorePhoneE164Any  = 0.4
	scorePhoneNational = 0.4
	scorePhoneGrouped  = 0.5 // national digits in the grouping people write for that country: no context needed
	scorePhonePlain    = 0.3
	scorePhoneLocal    = 0.15 // a formatted local number of no known national format: context needed
	maxNumberLen       = 32
)

// number is a run of digits with separators, as written in the text.
type number struct {
	start, end int
	digits     [maxNumberLen]byte
	n          int   // digits used
	plus       bool  // starts with "+"
	paren      bool  // holds a parenthesis
	seps       uint8 // the separators used: sepSpace | sepDash | sepDot
	groups     [maxNumberLen]uint8
	groupEnds  [maxNumberLen]int // the offset after each group's last digit
	ngroups    int
}

func isSep(c byte) bool { return c == ' ' || c == '-' || c == '.' }

// Separator bits of number.seps.
const (
	sepSpace uint8 = 1 << iota
	sepDash
	sepDot
)

func sepBit(c byte) uint8 {
	switch c {
	case ' ':
		return sepSpace
	case '-':
		return sepDash
	}
	return sepDot
}

// scanNumbers finds digit runs ("+1 (415) 555-2671", "4111 1111 1111 1111", "078-05-1121") and
// classifies each as a card, an SSN or a phone number.
func (e *Evaluator) scanNumbers(text string, out []Finding) []Finding {
	var num number // reused: readNumber resets what it reads
	for i := 0; i < len(text); i++ {
		c := text[i]
		if class[c]&clNumberLead == 0 {
			continue // the common case, one table read per byte
		}
		startsHere := isDigit(c) || (i+1 < len(text) && isDigit(text[i+1]))
		if !startsHere {
			continue
		}
		if i > 0 {
			p := text[i-1]
			if isAlnum(p) || p == '+' || p == '_' || p == '/' || ((p == '.' || p == '-' || p == ',') && i > 1 && isDigit(text[i-2])) {
				// Inside a word, a path or a longer number: skip to the end of the run, which a space
				// ends. (Skipping spaces too made "ref42 card 4111 1111 1111 1111" one run, hiding the
				// card and every number after a word with a digit: issue 23's audit.)
				for i+1 < len(text) && (isAlnum(text[i+1]) || (text[i+1] != ' ' && isSep(text[i+1]) && i+2 < len(text) && isAlnum(text[i+2]))) {
					i++
				}
				continue
			}
		}
		end := readNumber(text, i, &num)
		i = max(i, end-1)
		if num.n < 7 {
			continue
		}
		if x := extensionEnd(text, end); x > end {
			// "555-0132 x204", "ext. 12": a phone number with its extension, nothing else.
			i = x - 1
			if e.wants(Phone) && !dateLike(&num) {
				if score, ok := e.phoneScore(&num, num.digits[:num.n], true); ok && !notPhoneAt(text, &num) {
					out = append(out, Finding{Type: Phone, Start: num.start, End: x, Score: score})
				}
			}
			continue
		}
		if end < len(text) && (isAlnum(text[end]) || text[end] == '_' || ((text[end] == '.' || text[end] == '-') && end+1 < len(text) && isDigit(text[end+1]))) {
			continue
		}
		if end+1 < len(text) && text[end] == ',' && isDigit(text[end+1]) && !num.plus && !phoneGrouping(num.groups[:num.ngroups], num.digits[:num.n], num.paren, num.seps) {
			// "1,234,567": a comma between digits continues a number, except after a phone number
			// written in its country's grouping, which a CSV comma may follow ("+81 3-2388-1981,9325").
			continue
		}
		out = e.classify(text, &num, out)
	}
	return out
}

// readNumber reads digits and single separators from text[i:] into num, with an optional leading "+"
// and parentheses around a group, and returns where the number ends. Only the digits and groups it
// counts in num.n and num.ngroups are valid: the arrays are not cleared.
func readNumber(text string, i int, num *number) int {
	num.start, num.n, num.plus, num.paren, num.seps, num.ngroups = i, 0, false, false, 0, 0
	j := i
	if text[j] == '+' {
		num.plus = true
		j++
	}
	groupLen := 0
	last := i
	for j < len(text) && j-i < 2*maxNumberLen {
		c := text[j]
		switch {
		case isDigit(c):
			if num.n == maxNumberLen {
				num.end = j
				return j // too long to be anything we look for; the caller's bound check rejects it
			}
			num.digits[num.n] = c
			num.n++
			groupLen++
			j++
			last = j
			continue
		case c == '(' && groupLen == 0:
			if num.ngroups < 2 && closedParenGroup(text, j) {
				num.paren = true
				j++
				continue
			}
			if num.n == 0 && !num.plus {
				// "(471-84-0484 is what we have)": an opening parenthesis whose group never closes is
				// punctuation before the number, not part of it.
				j++
				num.start = j
				continue
			}
			// "+33 3 98 34 53 00 (24h)", "555-0132 (2)": a parenthesised note after a number ends it.
		case c == ')' && groupLen > 0 && num.paren:
			num.closeGroup(&groupLen, j)
			j++
			last = j
			if j < len(text) && text[j] == ' ' {
				j++
			}
			continue
		case isSep(c) && groupLen > 0 && j+1 < len(text) && (isDigit(text[j+1]) || (text[j+1] == '(' && num.ngroups == 0 && closedParenGroup(text, j+1))):
			// A parenthesised group continues a number only after its first group ("+41 (0)44", "1 (206)").
			num.closeGroup(&groupLen, j)
			num.seps |= sepBit(c)
			j++
			continue
		}
		break
	}
	num.closeGroup(&groupLen, last)
	num.end = last
	return last
}

// closedParenGroup reports whether text[j] is "(" followed by one to five digits and ")": the area code or
// trunk prefix of a phone number ("(415)", "(0)").
func closedParenGroup(text string, j int) bool {
	k := j + 1
	for k < len(text) && k-j <= 5 && isDigit(text[k]) {
		k++
	}
	return k > j+1 && k < len(text) && text[k] == ')'
}

// closeGroup records a finished group of digits that ends at end.
func (num *number) closeGroup(groupLen *int, end int) {
	if *groupLen > 0 && num.ngroups < maxNumberLen {
		num.groups[num.ngroups] = uint8(*groupLen)
		num.groupEnds[num.ngroups] = end
		num.ngroups++
	}
	*groupLen = 0
}

// notPhoneAt reports whether the words around national digits make them something else than a phone
// number: an identifier's label before them, a currency before or a unit after them. Read only for a
// number that would otherwise be a phone, so that dates and amounts cost nothing more.
func notPhoneAt(text string, num *number) bool {
	return !num.plus && (idLabelBefore(text, num.start) || unitAfter(text, num.end) || currencyBefore(text, num.start))
}

func containsByte(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}

func (e *Evaluator) classify(text string, num *number, out []Finding) []Finding {
	d := num.digits[:num.n]
	formatted := num.seps != 0 || num.paren
	if e.wants(CreditCard) && !num.plus && !num.paren && (num.seps == 0 || num.seps == sepSpace || num.seps == sepDash) {
		if score := cardScore(d); score > 0 {
			out = append(out, Finding{Type: CreditCard, Start: num.start, End: num.end, Score: score})
		} else if cardGroupsThenMore(num.groups[:num.ngroups]) {
			// "4111 1111 1111 1111 11/26 123": the expiry or the code written after a card in its
			// 4-4-4-4 grouping runs on as more groups; the card is the first four.
			if score := cardScore(d[:16]); score > 0 {
				out = append(out, Finding{Type: CreditCard, Start: num.start, End: num.groupEnds[3], Score: score})
			}
		}
	}
	if e.wants(USSSN) && !num.plus && !num.paren && num.n == 9 && validSSN(d) {
		switch {
		case num.ngroups == 3 && num.groups[0] == 3 && num.groups[1] == 2 && num.groups[2] == 4 && (num.seps == sepSpace || num.seps == sepDash):
			out = append(out, Finding{Type: USSSN, Start: num.start, End: num.end, Score: scoreSSNFormatted})
		case num.ngroups == 1:
			out = append(out, Finding{Type: USSSN, Start: num.start, End: num.end, Score: scoreSSNPlain})
		}
	}
	if e.wants(Phone) && !dateLike(num) && !notPhoneGrouping(num.groups[:num.ngroups], num.seps) {
		if score, ok := e.phoneScore(num, d, formatted); ok && !notPhoneAt(text, num) {
			out = append(out, Finding{Type: Phone, Start: num.start, End: num.end, Score: score})
		}
	}
	return out
}

// cardScore scores digits as a payment card number: scoreCard for a Luhn-valid number of a major
// network's prefix and length, scoreCardWeak for Luhn-valid numbers that only Maestro (12 to 19 digits)
// or an unassigned part of JCB's range issue, which need a context word ("card", ...); 0 otherwise.
func cardScore(d []byte) float64 {
	if len(d) < 12 || len(d) > 19 || !luhn(d) {
		return 0
	}
	if len(d) >= 13 && cardNetwork(d) {
		return scoreCard
	}
	if maestroOrJCBWide(d) {
		return scoreCardWeak
	}
	return 0
}

// maestroOrJCBWide: Maestro (50, 56-58, 6 prefixes, UK 0604; 12-19 digits), JCB's 15-digit 1800 and 2131,
// and 16-19 digit numbers starting 35 outside JCB's assigned 3528-3589.
func maestroOrJCBWide(d []byte) bool {
	n := len(d)
	p2 := int(d[0]-'0')*10 + int(d[1]-'0')
	p4 := p2*100 + int(d[2]-'0')*10 + int(d[3]-'0')
	switch {
	case n == 15 && (p4 == 1800 || p4 == 2131):
		return true
	case p2 == 35 && n >= 16:
		return true
	case p2 == 50 || (p2 >= 56 && p2 <= 58) || p2 == 63 || p2 == 67 || p4 == 6304 || p4 == 604:
		return true
	}
	return false
}

// luhn reports whether the digits pass the Luhn check.
func luhn(d []byte) bool {
	sum, double := 0, false
	for i := len(d) - 1; i >= 0; i-- {
		v := int(d[i] - '0')
		if double {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
		double = !double
	}
	return sum%10 == 0
}

// cardNetwork reports whether the number starts like a card of a major network (Visa, Mastercard,
// American Express, Discover, JCB, Diners Club, UnionPay) with a length that network issues.
func cardNetwork(d []byte) bool {
	n := len(d)
	p2 := int(d[0]-'0')*10 + int(d[1]-'0')
	p4 := p2*100 + int(d[2]-'0')*10 + int(d[3]-'0')
	switch {
	case d[0] == '4':
		return n == 13 || n == 16 || n == 19
	case (p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720):
		return n == 16
	case p2 == 34 || p2 == 37:
		return n == 15
	case p4 == 6011 || p2 == 65 || (p4/10 >= 644 && p4/10 <= 649):
		return n >= 16
	case p4 >= 3528 && p4 <= 3589:
		return n >= 16
	case p2 == 36 || p2 == 38 || (p4/10 >= 300 && p4/10 <= 305):
		return n >= 14
	case p2 == 62:
		return n >= 16
	}
	return false
}

// validSSN excludes what the Social Security Administration never issues: area 000, 666 or 900-999,
// group 00, serial 0000, and well-known sample numbers.
func validSSN(d []byte) bool {
	area, group, serial := string(d[:3]), string(d[3:5]), string(d[5:])
	if area == "000" || area == "666" || area[0] == '9' || group == "00" || serial == "0000" {
		return false
	}
	switch string(d) {
	case "123456789", "078051120", "219099999":
		return false
	}
	for i := 1; i < len(d); i++ {
		if d[i] != d[0] {
			return true
		}
	}
	return false
}
