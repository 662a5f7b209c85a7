package pii

// This file keeps the scanner as it was before the faster scan (commit ac440d1), as the oracle of
// TestScanMatchesReference and FuzzScanMatchesReference: the rewrite must find exactly what it found.

import (
	"cmp"
	"context"
	"math"
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/guardrail-control/guard/evaluator"
)

func refEvaluate(ctx context.Context, e *Evaluator, d *evaluator.Data) (evaluator.Result, error) {
	if d == nil || d.IsNull() || d.Text == "" {
		return evaluator.Result{Confidence: 1}, nil
	}
	if err := ctx.Err(); err != nil {
		return evaluator.Result{}, err
	}
	fs := refScan(e, d.Text)
	if len(fs) == 0 {
		return evaluator.Result{Confidence: 1}, nil
	}
	best := 0.0
	counts := map[string]int{}
	listed := make([]any, 0, min(len(fs), e.maxFindings))
	for i, f := range fs {
		best = max(best, f.Score)
		counts[f.Type]++
		if i < e.maxFindings {
			listed = append(listed, map[string]any{"type": f.Type, "start": f.Start, "end": f.End, "score": f.Score})
		}
	}
	types := make([]string, 0, len(counts))
	for t := range counts {
		types = append(types, t)
	}
	sort.Strings(types)
	var msg strings.Builder
	msg.WriteString("personal data found: ")
	countsAny := make(map[string]any, len(counts))
	for i, t := range types {
		if i > 0 {
			msg.WriteString(", ")
		}
		msg.WriteString(t)
		msg.WriteString(" (")
		msg.WriteString(strconv.Itoa(counts[t]))
		msg.WriteString(")")
		countsAny[t] = counts[t]
	}
	return evaluator.Result{
		Matched:    true,
		Confidence: best,
		Message:    msg.String(),
		Metadata:   map[string]any{"findings": listed, "finding_count": len(fs), "counts": countsAny, "entities": evaluator.AnyList(types)},
	}, nil
}

func refScan(e *Evaluator, text string) []Finding {
	var cands []Finding
	if e.entities[Email] {
		cands = refScanEmails(text, cands)
	}
	if e.entities[IBAN] {
		cands = refScanIBANs(text, cands)
	}
	if e.entities[IPAddress] {
		cands = refScanIPs(text, cands)
	}
	if e.entities[CreditCard] || e.entities[USSSN] || e.entities[Phone] {
		cands = refScanNumbers(e, text, cands)
	}
	if len(cands) == 0 {
		return nil
	}
	out := cands[:0]
	for _, c := range cands {
		if e.allowValues[text[c.Start:c.End]] {
			continue
		}
		if c.Score < 1 && refHasContext(e, text, c) {
			c.Score = math.Min(1, math.Round((c.Score+contextBoost)*100)/100)
		}
		if c.Score >= e.minConfidence {
			out = append(out, c)
		}
	}
	return refResolveOverlaps(out)
}

func refResolveOverlaps(fs []Finding) []Finding {
	if len(fs) < 2 {
		return fs
	}
	slices.SortStableFunc(fs, func(a, b Finding) int {
		switch {
		case a.Score != b.Score:
			return cmp.Compare(b.Score, a.Score)
		case a.Type != b.Type:
			return cmp.Compare(entityRank(a.Type), entityRank(b.Type))
		}
		return cmp.Compare(a.Start, b.Start)
	})
	kept := fs[:0:0]
	for _, f := range fs {
		overlaps := false
		for _, k := range kept {
			if f.Start < k.End && k.Start < f.End {
				overlaps = true
				break
			}
		}
		if !overlaps {
			kept = append(kept, f)
		}
	}
	slices.SortFunc(kept, func(a, b Finding) int { return cmp.Compare(a.Start, b.Start) })
	return kept
}

type refNumber struct {
	start, end int
	digits     [maxNumberLen]byte
	n          int   // digits used
	plus       bool  // starts with "+"
	paren      bool  // holds a parenthesis
	seps       uint8 // the separators used: sepSpace | sepDash | sepDot
	groups     [maxNumberLen]uint8
	groupEnds  [maxNumberLen]int
	ngroups    int
	notPhone   bool
}

func refScanNumbers(e *Evaluator, text string, out []Finding) []Finding {
	for i := 0; i < len(text); i++ {
		c := text[i]
		startsHere := isDigit(c) || ((c == '+' || c == '(') && i+1 < len(text) && isDigit(text[i+1]))
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
		num, end := refReadNumber(text, i)
		i = max(i, end-1)
		if num.n < 7 {
			continue
		}
		num.notPhone = !num.plus && (idLabelBefore(text, num.start) || unitAfter(text, end) || currencyBefore(text, num.start))
		if x := refExtensionEnd(text, end); x > end {
			i = x - 1
			if e.entities[Phone] && !num.notPhone && !refDateLike(&num) {
				if score, ok := refPhoneScore(e, &num, num.digits[:num.n], true); ok {
					out = append(out, Finding{Type: Phone, Start: num.start, End: x, Score: score})
				}
			}
			continue
		}
		if end < len(text) && (isAlnum(text[end]) || text[end] == '_' || ((text[end] == '.' || text[end] == '-') && end+1 < len(text) && isDigit(text[end+1]))) {
			continue
		}
		if strings.HasPrefix(text[end:], ",") && end+1 < len(text) && isDigit(text[end+1]) && !num.plus && !phoneGrouping(num.groups[:num.ngroups], num.digits[:num.n], num.paren, num.seps) {
			continue
		}
		out = refClassify(e, &num, out)
	}
	return out
}

func refReadNumber(text string, i int) (refNumber, int) {
	num := refNumber{start: i}
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
				return num, j // too long to be anything we look for; the caller's bound check rejects it
			}
			num.digits[num.n] = c
			num.n++
			groupLen++
			j++
			last = j
			continue
		case c == '(' && groupLen == 0:
			k := j + 1
			for k < len(text) && k-j <= 5 && isDigit(text[k]) {
				k++
			}
			if num.ngroups < 2 && k > j+1 && k < len(text) && text[k] == ')' {
				num.paren = true
				j++
				continue
			}
			if num.n == 0 && !num.plus {
				j++
				num.start = j
				continue
			}
		case c == ')' && groupLen > 0 && num.paren:
			num.closeGroup(&groupLen, j)
			j++
			last = j
			if j < len(text) && text[j] == ' ' {
				j++
			}
			continue
		case isSep(c) && groupLen > 0 && j+1 < len(text) && (isDigit(text[j+1]) || (text[j+1] == '(' && num.ngroups == 0 && regexp.MustCompile(`^\(\d{1,5}\)`).MatchString(text[j+1:]))):
			num.closeGroup(&groupLen, j)
			num.seps |= sepBit(c)
			j++
			continue
		}
		break
	}
	num.closeGroup(&groupLen, last)
	num.end = last
	return num, last
}

func (num *refNumber) closeGroup(groupLen *int, end int) {
	if *groupLen > 0 && num.ngroups < maxNumberLen {
		num.groups[num.ngroups] = uint8(*groupLen)
		num.groupEnds[num.ngroups] = end
		num.ngroups++
	}
	*groupLen = 0
}

func refClassify(e *Evaluator, num *refNumber, out []Finding) []Finding {
	d := num.digits[:num.n]
	formatted := num.seps != 0 || num.paren
	if e.entities[CreditCard] && !num.plus && !num.paren && (num.seps == 0 || num.seps == sepSpace || num.seps == sepDash) {
		if score := cardScore(d); score > 0 {
			out = append(out, Finding{Type: CreditCard, Start: num.start, End: num.end, Score: score})
		} else if g := num.groups[:num.ngroups]; len(g) > 4 && g[0] == 4 && g[1] == 4 && g[2] == 4 && g[3] == 4 {
			if score := cardScore(d[:16]); score > 0 {
				out = append(out, Finding{Type: CreditCard, Start: num.start, End: num.groupEnds[3], Score: score})
			}
		}
	}
	if e.entities[USSSN] && !num.plus && !num.paren && num.n == 9 && validSSN(d) {
		switch {
		case num.ngroups == 3 && num.groups[0] == 3 && num.groups[1] == 2 && num.groups[2] == 4 && (num.seps == sepSpace || num.seps == sepDash):
			out = append(out, Finding{Type: USSSN, Start: num.start, End: num.end, Score: scoreSSNFormatted})
		case num.ngroups == 1:
			out = append(out, Finding{Type: USSSN, Start: num.start, End: num.end, Score: scoreSSNPlain})
		}
	}
	if e.entities[Phone] && !num.notPhone && !refDateLike(num) && !notPhoneGrouping(num.groups[:num.ngroups], num.seps) {
		if score, ok := refPhoneScore(e, num, d, formatted); ok {
			out = append(out, Finding{Type: Phone, Start: num.start, End: num.end, Score: score})
		}
	}
	return out
}

func refScanIPs(text string, out []Finding) []Finding {
	for i := 0; i < len(text); {
		c := text[i]
		if !isHexByte(c) && c != ':' {
			i++
			continue
		}
		if i > 0 && (isAlnum(text[i-1]) || text[i-1] == '.' || text[i-1] == ':') {
			i++
			continue
		}
		j, marks := i, 0
		for j < len(text) && (isHexByte(text[j]) || text[j] == '.' || text[j] == ':') {
			if text[j] == '.' || text[j] == ':' {
				marks++
			}
			j++
		}
		if marks < 2 {
			i = j + 1
			continue
		}
		tok := strings.TrimRight(text[i:j], ".:")
		end := i + len(tok)
		if end < len(text) && isAlnum(text[end]) {
			i = j
			continue
		}
		switch {
		case strings.Count(tok, ":") >= 2:
			if a, err := netip.ParseAddr(tok); err == nil && a.Is6() {
				out = append(out, Finding{Type: IPAddress, Start: i, End: end, Score: scoreIP})
			}
		default:
			addr, port, hasPort := strings.Cut(tok, ":")
			if hasPort {
				if _, err := strconv.Atoi(port); err != nil || len(port) > 5 || strings.ContainsAny(port, "+-") {
					break
				}
			}
			if strings.Count(addr, ".") == 3 && validIPv4(addr) && !versionBefore(text, i) {
				score := scoreIP
				parts := strings.Split(addr, ".")
				if len(parts[0]) == 1 && len(parts[1]) <= 2 && len(parts[2]) <= 2 && len(parts[3]) <= 2 {
					score = scoreIPVersionShaped
				}
				out = append(out, Finding{Type: IPAddress, Start: i, End: i + len(addr), Score: score})
			}
		}
		i = max(j, i+1)
	}
	return out
}

func refScanIBANs(text string, out []Finding) []Finding {
	for i := 0; i+15 <= len(text); i++ {
		letter := func(c byte) bool { return isUpper(c) || ('a' <= c && c <= 'z') }
		if !letter(text[i]) || !letter(text[i+1]) || !isDigit(text[i+2]) || !isDigit(text[i+3]) {
			continue
		}
		if i > 0 && isAlnum(text[i-1]) {
			continue
		}
		lower := !isUpper(text[i]) || !isUpper(text[i+1])
		// Collect up to 34 letters and digits, remembering where each group may end.
		var chars [34]byte
		var ends [34]int // ends[n-1]: text offset after the n-th character
		n, j := 0, i
		for j < len(text) && n < 34 {
			c := text[j]
			switch {
			case letter(c) || isDigit(c):
				chars[n] = strings.ToUpper(string(c))[0]
				n++
				ends[n-1] = j + 1
				j++
			case c == ' ' && j+1 < len(text) && (letter(text[j+1]) || isDigit(text[j+1])) && n%4 == 0:
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

func refScanEmails(text string, out []Finding) []Finding {
	from := 0
	for {
		k := strings.IndexByte(text[from:], '@')
		if k < 0 {
			return out
		}
		at := from + k
		from = at + 1
		s := at
		for s > 0 && isLocalByte(text[s-1]) && at-s < 64 {
			s--
		}
		for s < at && text[s] == '.' {
			s++
		}
		if s == at || text[at-1] == '.' || notAnAddress(text, s) {
			continue
		}
		e := at + 1
		for e < len(text) && isDomainByte(text[e]) && e-at < 255 {
			e++
		}
		for e > at+1 && (text[e-1] == '.' || text[e-1] == '-') {
			e--
		}
		if !validDomain(text[at+1 : e]) {
			continue
		}
		out = append(out, Finding{Type: Email, Start: s, End: e, Score: 1})
		from = e
	}
}

func refHasContext(e *Evaluator, text string, f Finding) bool {
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

// refExtensionEnd: an extension after a number ("x204", " ext. 12", " extension 7", "#33"), written out
// with the standard library.
func refExtensionEnd(text string, end int) int {
	rest := text[end:]
	rest = strings.TrimPrefix(rest, " ")
	lower := strings.ToLower(rest)
	var after string
	switch {
	case strings.HasPrefix(lower, "x") || strings.HasPrefix(lower, "#"):
		after = rest[1:]
	case strings.HasPrefix(lower, "extension"):
		after = rest[len("extension"):]
	case strings.HasPrefix(lower, "ext."):
		after = rest[len("ext."):]
	case strings.HasPrefix(lower, "ext"):
		after = rest[len("ext"):]
	default:
		return end
	}
	after = strings.TrimPrefix(after, " ")
	n := 0
	for n < len(after) && n < 6 && isDigit(after[n]) {
		n++
	}
	if n == 0 || (n < len(after) && isAlnum(after[n])) {
		return end
	}
	return len(text) - len(after) + n
}

// refDateLike: the groups of a number spell a date (year-month-day or day-month-year).
func refDateLike(num *refNumber) bool {
	if num.ngroups < 2 || num.plus || num.paren {
		return false
	}
	g := num.groups
	d := string(num.digits[:num.n])
	if g[0] == 8 {
		y, _ := strconv.Atoi(d[:4])
		m, _ := strconv.Atoi(d[4:6])
		day, _ := strconv.Atoi(d[6:8])
		return y >= 1000 && y < 3000 && m >= 1 && m <= 12 && day >= 1 && day <= 31
	}
	if num.ngroups < 3 {
		return false
	}
	a, _ := strconv.Atoi(d[:g[0]])
	b, _ := strconv.Atoi(d[g[0] : g[0]+g[1]])
	c, _ := strconv.Atoi(d[g[0]+g[1] : g[0]+g[1]+g[2]])
	switch {
	case g[0] == 4 && g[1] <= 2 && g[2] <= 2:
		return b >= 1 && b <= 12 && c >= 1 && c <= 31
	case g[0] <= 2 && g[1] <= 2 && g[2] == 4:
		return a >= 1 && a <= 31 && b >= 1 && b <= 31 && (a <= 12 || b <= 12)
	}
	return false
}

func refPhoneScore(e *Evaluator, num *refNumber, d []byte, formatted bool) (float64, bool) {
	plus := num.plus
	if !plus && len(d) >= 10 && d[0] == '0' && d[1] == '0' && d[2] != '0' {
		d, plus = d[2:], true
	}
	if plus && num.paren && num.ngroups >= 2 && num.groups[1] == 1 && int(num.groups[0]) < len(d) && d[num.groups[0]] == '0' {
		d = append(append([]byte{}, d[:num.groups[0]]...), d[num.groups[0]+1:]...)
	}
	if !plus && formatted && phoneGrouping(num.groups[:num.ngroups], d, num.paren, num.seps) {
		for _, c := range e.phoneCountries {
			if refNationalMatch(c, d) {
				return scorePhoneGrouped, true
			}
		}
	}
	if s, ok := refPhoneScoreDigits(e, plus, d, formatted); ok {
		return s, ok
	}
	if !plus && formatted && num.ngroups >= 2 && len(d) <= 12 && num.seps&sepDot == 0 && len(e.phoneCountries) == len(nationalCountries) && !(num.groups[0] == 1 && strings.Trim(string(num.groups[1:num.ngroups]), "\x03") == "") {
		return scorePhoneLocal, true
	}
	return 0, false
}

func refPhoneScoreDigits(e *Evaluator, plus bool, d []byte, formatted bool) (float64, bool) {
	if plus {
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
		if refNationalMatch(c, d) {
			if formatted {
				return scorePhoneNational, true
			}
			return scorePhonePlain, true
		}
	}
	return 0, false
}

// refNationalMatch checks the digits of a number written without its international prefix against the
// national format of a country. It is a switch rather than a table of functions so that the digits
// stay on the caller's stack.
func refNationalMatch(country string, d []byte) bool {
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
