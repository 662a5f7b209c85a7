package pii

import (
	"net/netip"
	"strings"
)

// Base scores of IP addresses (Presidio's IpRecognizer scores 0.6).
const (
	scoreIP              = 0.6
	scoreIPVersionShaped = 0.3
)

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
		default:
			if v4, ok := ipv4WithPort(tok); ok && !versionBefore(text, i) {
				out = append(out, Finding{Type: IPAddress, Start: i, End: i + len(v4), Score: ipv4Score(v4)})
			}
		}
	}
	return out
}

// ipv4WithPort returns the dotted-quad address of tok, which may be followed by a port ("10.0.3.7:8081").
func ipv4WithPort(tok string) (string, bool) {
	addr := tok
	if h, port, ok := strings.Cut(tok, ":"); ok {
		if port == "" || len(port) > 5 || strings.Trim(port, "0123456789") != "" {
			return "", false
		}
		addr = h
	}
	return addr, strings.Count(addr, ".") == 3 && validIPv4(addr)
}

// ipv4Score is the base score of a dotted quad: scoreIPVersionShaped when it is shaped like a version
// (a one-digit first part and every part under 100: 1.2.7.1, 5.15.0.91, 6.1.0.12), which an IP context
// word ("ip", "address", "host", ...) must confirm; scoreIP otherwise.
func ipv4Score(s string) float64 {
	if len(s) < 2 || s[1] != '.' {
		return scoreIP
	}
	for _, p := range strings.Split(s, ".") {
		if len(p) > 2 {
			return scoreIP
		}
	}
	return scoreIPVersionShaped
}

// indexByteFrom is the offset of the first c in text[from:], counted from the start of text, or
// len(text) when there is none.
func indexByteFrom(text string, from int, c byte) int {
	if k := strings.IndexByte(text[from:], c); k >= 0 {
		return from + k
	}
	return len(text)
}

// versionBefore reports whether the word before text[i] (past spaces, quotes, an equals sign, a colon or
// a dot) says that a dotted number is a version or a section number: "version 1.2.7.1", "Build
// 10.0.19045.3803", "release: 4.2.0.1", `"app_version": "5.15.0.91"`, "sdk=6.1.0.12", "rule 1.2.7.1".
func versionBefore(text string, i int) bool {
	j := i
	for j > 0 && strings.IndexByte(` :.="'`, text[j-1]) >= 0 && i-j < 4 {
		j--
	}
	k := j
	for k > 0 && j-k < 12 && isAlnum(text[k-1]) {
		k--
	}
	switch strings.ToLower(text[k:j]) {
	case "version", "ver", "v", "build", "release", "rev", "revision", "firmware", "driver", "patch", "update", "versions",
		"sdk", "agent", "rule", "section", "clause", "chapter", "step":
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
