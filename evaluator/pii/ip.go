package pii

import (
	"net/netip"
	"strings"
)

// Base scores of IP addresses (Presidio's IpRecognizer scores 0.6).
const scoreIP = 0.6

func isHexByte(c byte) bool { return class[c]&clHex != 0 }

func isIPByte(c byte) bool { return class[c]&(clHex|clIPMark) != 0 }

// scanIPs appends IPv4 addresses (four dotted decimal octets, no leading zeros) and IPv6 addresses
// (checked with net/netip). A candidate is a maximal run of hex digits, dots and colons that starts with
// a hex digit or a colon, holds at least two dots or colons and follows no letter or digit; the scan
// jumps from one dot or colon to the next (IndexByte), so prose costs almost nothing.
func scanIPs(text string, out []Finding) []Finding {
	dot, colon := -1, -1 // the next "." and ":" at or after from; -1 before the first search
	for from := 0; from < len(text); {
		if dot < from && dot != len(text) {
			dot = indexByteFrom(text, from, '.')
		}
		if colon < from && colon != len(text) {
			colon = indexByteFrom(text, from, ':')
		}
		p := min(dot, colon)
		if p == len(text) {
			return out
		}
		i, j := p, p+1
		for i > 0 && isIPByte(text[i-1]) {
			i--
		}
		for j < len(text) && isIPByte(text[j]) {
			j++
		}
		from = j
		if text[i] == '.' || (i > 0 && isAlnum(text[i-1])) {
			continue
		}
		marks := 0
		for k := i; k < j && marks < 2; k++ {
			if class[text[k]]&clIPMark != 0 {
				marks++
			}
		}
		if marks < 2 {
			continue
		}
		tok := strings.TrimRight(text[i:j], ".:")
		end := i + len(tok)
		if end < len(text) && isAlnum(text[end]) {
			continue
		}
		switch {
		case strings.Count(tok, ":") >= 2:
			if a, err := netip.ParseAddr(tok); err == nil && a.Is6() {
				out = append(out, Finding{Type: IPAddress, Start: i, End: end, Score: scoreIP})
			}
		case strings.Count(tok, ".") == 3 && validIPv4(tok) && !versionBefore(text, i):
			out = append(out, Finding{Type: IPAddress, Start: i, End: end, Score: scoreIP})
		}
	}
	return out
}

// indexByteFrom is the offset of the first c in text[from:], counted from the start of text, or
// len(text) when there is none.
func indexByteFrom(text string, from int, c byte) int {
	if k := strings.IndexByte(text[from:], c); k >= 0 {
		return from + k
	}
	return len(text)
}

// versionBefore reports whether the word before text[i] (past spaces, a colon or a dot) says that a dotted
// number is a version: "version 1.2.7.1", "Build 10.0.19045.3803", "release: 4.2.0.1".
func versionBefore(text string, i int) bool {
	j := i
	for j > 0 && (text[j-1] == ' ' || text[j-1] == ':' || text[j-1] == '.') && i-j < 3 {
		j--
	}
	k := j
	for k > 0 && j-k < 12 && isAlnum(text[k-1]) {
		k--
	}
	switch strings.ToLower(text[k:j]) {
	case "version", "ver", "v", "build", "release", "rev", "revision", "firmware", "driver", "patch", "update", "versions":
		return true
	}
	return false
}

func validIPv4(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		if p == "" || len(p) > 3 || (len(p) > 1 && p[0] == '0') {
			return false
		}
		n := 0
		for i := 0; i < len(p); i++ {
			if !isDigit(p[i]) {
				return false
			}
			n = n*10 + int(p[i]-'0')
		}
		if n > 255 {
			return false
		}
	}
	return true
}
