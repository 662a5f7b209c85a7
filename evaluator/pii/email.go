package pii

import "strings"

func isLocalByte(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-'
}

func isDomainByte(c byte) bool { return isAlnum(c) || c == '.' || c == '-' }

// scanEmails appends the e-mail addresses of text: a local part, "@", and a domain of at least two
// labels whose last label (the top-level domain) has two or more letters. Score 1.
func scanEmails(text string, out []Finding) []Finding {
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

// validDomain checks labels (non-empty, no leading or trailing hyphen, at least two) and an alphabetic
// TLD of two or more letters, without allocating.
func validDomain(d string) bool {
	labels := 0
	for len(d) > 0 {
		l := d
		if i := strings.IndexByte(d, '.'); i >= 0 {
			l, d = d[:i], d[i+1:]
			if d == "" {
				return false // trailing dot: an empty last label
			}
		} else {
			d = ""
		}
		if l == "" || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		labels++
		if d == "" { // l is the TLD
			if labels < 2 || len(l) < 2 {
				return false
			}
			for i := 0; i < len(l); i++ {
				if isDigit(l[i]) || l[i] == '-' {
					return false
				}
			}
		}
	}
	return labels >= 2
}

// notAnAddress reports whether the would-be address starting at text[s] is another thing written with an
// "@": the end of a path or reference ("REF/7243/538@mail.example", "a/b@c.de") or a message identifier
// on a mail header's line ("Message-ID: <x@host>", "In-Reply-To:", "References:", "Content-ID:").
func notAnAddress(text string, s int) bool {
	if s == 0 {
		return false
	}
	if text[s-1] == '/' {
		return true
	}
	line := s - 1
	for line > 0 && text[line-1] != '\n' && s-line < 200 {
		line--
	}
	head := text[line:s]
	for _, h := range [...]string{"message-id:", "in-reply-to:", "references:", "content-id:"} {
		if hasPrefixFold(head, h) {
			return true
		}
	}
	return false
}
