package pii

import (
	"net/netip"
	"strings"
)

// Base scores of IP addresses (Presidio's IpRecognizer scores 0.6).
const scoreIP = 0.6

func isHexByte(c byte) bool { return class[c]&clHex != 0 }

// scanIPs appends IPv4 addresses (four dotted decimal octets, no leading zeros) and IPv6 addresses
// (checked with net/netip), bounded by characters that cannot extend them.
func scanIPs(text string, out []Finding) []Finding {
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
		case strings.Count(tok, ".") == 3 && validIPv4(tok):
			out = append(out, Finding{Type: IPAddress, Start: i, End: end, Score: scoreIP})
		}
		i = max(j, i+1)
	}
	return out
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
