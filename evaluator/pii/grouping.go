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
// Japan's 2-4-4, Switzerland's 3-3-2-2. (The 4-3-3 of Australia's mobiles and of 0800 freephone numbers,
// "0412 345 678", is checked with its prefix: other numbers in that grouping are as often account or
// parcel numbers.)
var trunkGroupings = [][]uint8{
	{2, 2, 2, 2, 2}, {3, 3, 2, 2}, {3, 4, 4}, {4, 3, 4}, {5, 3, 3}, {2, 4, 4}, {3, 3, 4}, {2, 3, 3, 2},
}

// phoneGrouping reports whether the groups of a number written without an international prefix are
// those of a national phone number: the North American 3-3-4 (with the area code in parentheses or a
// trunk 1 before it; with a dash, a dot or parentheses), Italy's mobile 3-3-4 and 3-7, Spain's 3-3-3 and
// 2-3-2-2, India's 5-5 mobile grouping, and, for numbers from a trunk 0, one of trunkGroupings or
// an area code of two to five digits and a subscriber number of five to eight (Germany, the Netherlands,
// Italy: "030 9674786", "06 12345678"). The national format itself is checked by nationalMask.
func phoneGrouping(groups []uint8, d []byte, paren bool, seps uint8) bool {
	switch {
	case len(d) < 9:
		return false
	case nanp(d) && (slices.Equal(groups, []uint8{3, 3, 4}) || (d[0] == '1' && slices.Equal(groups, []uint8{1, 3, 3, 4}))):
		// North Americans write a dash, a dot or parentheses; three groups parted by spaces alone are as
		// often counts, pages or sums ("312 455 2019 shares") and need a context word.
		return paren || seps&(sepDash|sepDot) != 0
	case paren && d[0] != '0':
		// Only a trunk area code is written in parentheses outside North America ("(02) 9374 4000").
		return false
	case len(d) == 10 && d[0] >= '6' && slices.Equal(groups, []uint8{5, 5}):
		// India's mobiles, but not two round figures side by side ("65000 85000").
		return string(d[2:5]) != "000" || string(d[7:]) != "000"
	case len(d) == 10 && d[0] == '3' && (slices.Equal(groups, []uint8{3, 3, 4}) || slices.Equal(groups, []uint8{3, 7})):
		// Italy's mobiles: "340 123 4567", "340 1234567".
		return true
	case len(d) == 9 && d[0] >= '6' && (slices.Equal(groups, []uint8{3, 3, 3}) || (d[0] >= '8' && slices.Equal(groups, []uint8{2, 3, 2, 2}))):
		// Spain: "612 345 678", "912 345 678", "91 234 56 78".
		return true
	case d[0] != '0' || d[1] == '0':
		return false
	case len(d) == 10 && slices.Equal(groups, []uint8{4, 3, 3}):
		return d[1] == '4' || string(d[1:4]) == "800" // 04xx mobiles, 0800 freephone
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

// thousandsGrouping reports whether groups are a count written in thousands from a single digit
// ("1 234 567"): not a local phone number.
func thousandsGrouping(groups []uint8) bool {
	if groups[0] != 1 {
		return false
	}
	for _, g := range groups[1:] {
		if g != 3 {
			return false
		}
	}
	return true
}

// cardGroupsThenMore reports whether a number is four groups of four digits followed by more groups.
func cardGroupsThenMore(groups []uint8) bool {
	return len(groups) > 4 && groups[0] == 4 && groups[1] == 4 && groups[2] == 4 && groups[3] == 4
}

// idLabelBefore reports whether the words just before text[start] label the number as an identifier
// ("Reference 415-555-2671", "Order #212 555 0187", "Invoice No. 212 555 0187", "Claim number 0800 123
// 4567", "Kundennummer: 0800 1234567", "N° de facture : 01 23 45 67 89", "request_id=0412 345 678"): such a
// number is an identifier that happens to have a phone number's shape, not a phone number, whatever context
// word is near (the "number" of "Claim number" is one). Up to labelWords words on the same line are read backwards:
// words that name a number ("no", "nr", "number", "de") are passed over, a phone word ("phone", "fax",
// "hotline") or any other word ends the search, an identifier's label ("invoice", "policy", a German
// compound ending in "nummer") is found, and a weak label ("customer", "patient") counts only next to a word
// naming a number ("Customer No: 415 867 5309", "Codice cliente", not "Customer John 415 867 5309").
func idLabelBefore(text string, start int) bool {
	j := start
	numbered, weak := false, false
	for w := 0; w < labelWords; w++ {
		for j > 0 && start-j < 48 && strings.IndexByte(labelPunct, text[j-1]) >= 0 {
			j--
		}
		k := j
		for k > 0 && j-k < 24 && (class[text[k-1]]&(clUpper|clLower) != 0 || text[k-1] >= 0x80) {
			k--
		}
		if k == j || (k > 0 && isDigit(text[k-1])) {
			return false
		}
		switch labelKind(text[k:j]) {
		case labelStrong:
			// "Caller ID: 020 7946 0958" is the phone number of whoever called.
			return !(j-k == 2 && k > 0 && hasSuffixFold(strings.TrimRight(text[max(0, k-8):k], " -"), "caller"))
		case labelWeak:
			if numbered {
				return true
			}
			// "Référence client 06 12 34 56 78", "Codice cliente": the word before may be a label or name a
			// number.
			weak = true
		case labelNumberWord:
			if weak {
				return true
			}
			numbered = true
		default:
			return false
		}
		j = k
	}
	return false
}

// labelWords is how many words before a number idLabelBefore reads; labelPunct is what it passes over
// between them (a JSON key's quotes, a table's bar: {"order_id": "0412 345 678"}, | Invoice | ...).
const (
	labelWords = 4
	labelPunct = " \t#:.,=_-|\"'°º"
)

// The kinds of word idLabelBefore tells apart.
const (
	labelOther = iota
	labelStrong
	labelWeak
	labelNumberWord
)

// labelKind classifies a word (ASCII case-insensitively; other bytes compared exactly).
func labelKind(w string) int {
	for _, l := range idLabels {
		if len(l) == len(w) && equalFoldASCII(w, l) {
			return labelStrong
		}
	}
	for _, l := range weakIDLabels {
		if len(l) == len(w) && equalFoldASCII(w, l) {
			return labelWeak
		}
	}
	for _, l := range numberWords {
		if len(l) == len(w) && equalFoldASCII(w, l) {
			return labelNumberWord
		}
	}
	// German compounds: "Kundennummer", "Vertragsnr", but not "Telefonnummer", "Rufnummer", "Handynr".
	for _, suffix := range [...]string{"nummer", "nr"} {
		if len(w) > len(suffix)+1 && equalFoldASCII(w[len(w)-len(suffix):], suffix) {
			for _, p := range phoneCompounds {
				if len(w) >= len(p) && equalFoldASCII(w[:len(p)], p) {
					return labelOther
				}
			}
			return labelStrong
		}
	}
	return labelOther
}

// idLabels are the words that label a number as an identifier (lower case; UTF-8 bytes as written).
var idLabels = [...]string{"reference", "ref", "order", "invoice", "ticket", "case", "tracking", "account", "acct",
	"id", "po", "sku", "serial", "batch", "lot", "policy", "claim", "booking", "confirmation",
	"transaction", "contract", "mrn", "nhs", "utr", "parcel", "shipment", "consignment", "pallet", "container",
	"receipt", "voucher", "meter", "registration", "vat", "iban", "mandate",
	"aktenzeichen", "az", "kunden", "rechnung", "bestellung", "auftrag", "vertrag", "referenz", "kunde",
	"facture", "commande", "dossier", "matricule", "contrat", "r\xc3\xa9f\xc3\xa9rence", "r\xc3\xa9f",
	"factura", "pedido", "contrato", "p\xc3\xb3liza", "referencia", "expediente",
	"siren", "siret", "tva", "abn", "acn", "tfn", "bsn", "kvk", "cpf", "cnpj", "pan", "aadhaar", "ssn", "ein",
	"nif", "cif", "nie", "dni", "isbn", "ean", "upc", "imei", "imsi", "iccid", "vin", "pin", "passcode", "otp", "matter", "zeichen", "kontoauszug", "conto", "extracto", "compte",
	"fattura", "ordine", "contratto", "polizza", "riferimento", "pratica",
	"factuur", "bestelling", "klantnummer", "polis", "kenmerk", "dossiernummer"}

// weakIDLabels label a number as an identifier only before a word naming a number ("Customer No:").
var weakIDLabels = [...]string{"customer", "client", "member", "patient", "employee", "student", "user",
	"cliente", "klant", "mitglied", "membre", "socio", "police", "access", "license", "licence", "driver", "passport"}

// numberWords name a number between a label and the number ("Invoice No.", "N\xc2\xb0 de facture").
var numberWords = [...]string{"no", "nr", "n", "nos", "num", "number", "nummer", "numero", "num\xc3\xa9ro",
	"n\xc3\xbamero", "code", "codice", "c\xc3\xb3digo", "de", "du", "of", "the", "your", "our", "is", "was"}

// phoneCompounds are the starts of German compounds ending in "nummer" or "nr" that name a phone number.
var phoneCompounds = [...]string{"telefon", "tel", "ruf", "handy", "mobil", "fax", "durchwahl", "service", "hotline", "kontakt"}

// currencyBefore reports whether a currency sign or code comes just before text[start] ("EUR 2 345 678",
// "€ 612 345 678", "CHF 912 345 678"): an amount, not a phone number.
func currencyBefore(text string, start int) bool {
	j := start
	if j > 0 && text[j-1] == ' ' {
		j--
	}
	for _, c := range [...]string{"\xe2\x82\xac", "$", "\xc2\xa3", "\xc2\xa5", "\xe2\x82\xb9"} {
		if strings.HasSuffix(text[:j], c) {
			return true
		}
	}
	k := j
	for k > 0 && j-k < 4 && class[text[k-1]]&clUpper != 0 {
		k--
	}
	if j-k != 3 || (k > 0 && isAlnum(text[k-1])) {
		return false
	}
	w := text[k:j]
	for _, u := range currencyCodes {
		if w == u {
			return true
		}
	}
	return false
}

// currencyCodes are the ISO 4217 codes that currencyBefore knows, as written (upper case).
var currencyCodes = [...]string{"EUR", "USD", "GBP", "CHF", "INR", "AUD", "CAD", "JPY", "BRL", "SEK", "NOK", "DKK", "PLN", "CZK", "MXN", "ZAR"}

// unitAfter reports whether a unit or a currency follows a number ("01 23 45 67 89 ms", "06 123 456
// kWh", "2 500 000 EUR"): a quantity, not a phone number.
func unitAfter(text string, end int) bool {
	j := end
	if j < len(text) && text[j] == ' ' {
		j++
	}
	k := j
	for k < len(text) && k-j < 8 && (class[text[k]]&(clUpper|clLower) != 0) {
		k++
	}
	if k > j && (k == len(text) || !isAlnum(text[k])) {
		w := text[j:k]
		for _, u := range units {
			if len(u) == len(w) && equalFoldASCII(w, u) {
				return true
			}
		}
		return false
	}
	for _, u := range [...]string{"%", "\xe2\x82\xac", "$", "\xc2\xa3", "\xc2\xa5", "\xe2\x82\xb9"} {
		if strings.HasPrefix(text[j:], u) {
			return true
		}
	}
	return false
}

// units are the units and currency codes that unitAfter knows (lower case).
var units = [...]string{"ms", "sec", "min", "kg", "km", "mm", "cm", "kwh", "mwh", "kb", "mb", "gb", "tb",
	"eur", "usd", "gbp", "chf", "inr", "aud", "cad", "jpy", "brl", "rs", "pts", "euro", "euros", "dollars",
	"francs", "pounds", "rupees", "reais", "yen", "bytes", "pages", "votes", "visits", "users", "units", "tonnes"}

func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && equalFoldASCII(s[len(s)-len(suffix):], suffix)
}
