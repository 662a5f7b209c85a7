package pii

import (
	"slices"
	"strings"
)

// How people group the digits of a number says what it is. A phone number written in the grouping of its
// country ("(212) 555-0187", "020 7946 0958", "07 23 01 25 14", "044 668 18 00") is a phone number without a
// context word; a 3-2-4 grouping is an SSN's and a 5-4 grouping with a dash a US ZIP+4 code, never a phone;
// a card's 4-4-4-4 grouping followed by more groups is a card followed by its expiry or code.

// trunkGroupings are the groupings of national numbers that start with the trunk 0, by country: France
// and Switzerland's pairs, the United Kingdom's 3-4-4, 4-3-4, 5-6 and 5-3-3, Australia's, Italy's and
// Japan's 2-4-4 and 4-3-3, Switzerland's 3-3-2-2.
var trunkGroupings = [][]uint8{
	{2, 2, 2, 2, 2}, {3, 3, 2, 2}, {3, 4, 4}, {4, 3, 4}, {5, 3, 3}, {2, 4, 4}, {4, 3, 3}, {3, 3, 4}, {2, 3, 3, 2},
}

// phoneGrouping reports whether the groups of a number written without an international prefix are
// those of a national phone number: the North American 3-3-4 (with the area code in parentheses or a
// trunk 1 before it), India's 5-5 mobile grouping, and, for numbers from a trunk 0, one of trunkGroupings or
// an area code of two to five digits and a subscriber number of five to eight (Germany, the Netherlands,
// Italy: "030 9674786", "06 12345678"). The national format itself is checked by nationalMask.
func phoneGrouping(groups []uint8, d []byte, paren bool) bool {
	switch {
	case len(d) < 9:
		return false
	case nanp(d) && (slices.Equal(groups, []uint8{3, 3, 4}) || (d[0] == '1' && slices.Equal(groups, []uint8{1, 3, 3, 4}))):
		return true
	case paren:
		return false
	case len(d) == 10 && d[0] >= '6' && slices.Equal(groups, []uint8{5, 5}):
		return true
	case d[0] != '0' || d[1] == '0':
		return false
	case len(groups) == 2:
		return groups[0] >= 2 && groups[0] <= 5 && groups[1] >= 5 && groups[1] <= 8 && len(d) >= 10 && len(d) <= 12
	}
	for _, g := range trunkGroupings {
		if slices.Equal(groups, g) {
			return true
		}
	}
	return false
}

// notPhoneGrouping reports whether groups are an SSN's (3-2-4) or, with a dash, a US ZIP+4 code (5-4):
// shapes that phone numbers are not written in.
func notPhoneGrouping(groups []uint8, seps uint8) bool {
	return slices.Equal(groups, []uint8{3, 2, 4}) || (seps == sepDash && slices.Equal(groups, []uint8{5, 4}))
}

// cardGroupsThenMore reports whether a number is four groups of four digits followed by more groups.
func cardGroupsThenMore(groups []uint8) bool {
	return len(groups) > 4 && groups[0] == 4 && groups[1] == 4 && groups[2] == 4 && groups[3] == 4
}

// idLabelBefore reports whether the word before text[start] (past spaces, "#", ":" or ".") labels the
// number as an identifier ("Reference 415-555-2671", "Order #212 555 0187"): such a number keeps the score
// of a formatted national number and needs a context word to count as a phone.
func idLabelBefore(text string, start int) bool {
	j := start
	for j > 0 && start-j < 4 && strings.IndexByte(" #:.", text[j-1]) >= 0 {
		j--
	}
	k := j
	for k > 0 && j-k < 12 && class[text[k-1]]&(clUpper|clLower) != 0 {
		k--
	}
	if k == j || (k > 0 && isAlnum(text[k-1])) {
		return false
	}
	w := text[k:j]
	for _, l := range idLabels {
		if len(l) == len(w) && equalFoldASCII(w, l) {
			return true
		}
	}
	return false
}

// idLabels are the words that label a number as an identifier (lower case).
var idLabels = [...]string{"reference", "ref", "order", "invoice", "ticket", "case", "tracking", "account", "acct",
	"id", "po", "sku", "serial", "batch", "lot", "member", "policy", "claim", "booking", "confirmation",
	"transaction"}
