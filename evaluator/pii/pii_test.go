package pii

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/evaluator"
)

func build(t testing.TB, cfg map[string]any) *Evaluator {
	t.Helper()
	r := evaluator.NewRegistry()
	r.Register(Factory())
	b, err := r.Build(Name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b.Evaluator.(*Evaluator)
}

func TestFindings(t *testing.T) {
	all0 := map[string]any{"min_confidence": 0}
	ssnOnly := map[string]any{"min_confidence": 0, "entities": []any{"us_ssn"}}
	tests := []struct {
		name, text string
		cfg        map[string]any
		want       string // "type@value" of the one finding, "" for none
	}{
		{"email", "write to jane.doe+news@example.co.uk today", nil, "email@jane.doe+news@example.co.uk"},
		{"not an email", "user@localhost and a@b.c", nil, ""},
		{"visa with spaces", "card 4111 1111 1111 1111 ok", nil, "credit_card@4111 1111 1111 1111"},
		{"card failing luhn", "card 4111 1111 1111 1112 ok", nil, ""},
		{"amex with dashes", "3782-822463-10005", nil, "credit_card@3782-822463-10005"},
		{"iban compact", "pay to DE89370400440532013000 now", nil, "iban@DE89370400440532013000"},
		{"iban grouped", "IBAN: GB82 WEST 1234 5698 7654 32.", nil, "iban@GB82 WEST 1234 5698 7654 32"},
		{"iban bad checksum", "DE89370400440532013001", nil, ""},
		{"ssn formatted", "id 078-05-1121 here", nil, "us_ssn@078-05-1121"},
		{"ssn with context word", "my SSN: 536 22 1234", nil, "us_ssn@536 22 1234"},
		{"ssn invalid area", "666-12-3456 and 900-12-3456", ssnOnly, ""},
		{"ssn group 00", "123-00-4567", ssnOnly, ""},
		{"ipv4", "server at 192.168.10.24.", nil, "ip_address@192.168.10.24"},
		{"ipv4 out of range", "999.1.1.1", all0, ""},
		{"ipv6", "bind [2001:db8::8a2e:370:7334] now", nil, "ip_address@2001:db8::8a2e:370:7334"},
		{"time is not ipv6", "at 10:30:00 sharp", all0, ""},
		{"e164", "ring +44 20 7946 0958 please", nil, "phone@+44 20 7946 0958"},
		// Issue 28 (held-out documents): a national number in its country's grouping is a phone without a
		// context word; one written as a bare run of digits still needs one.
		{"us national digits need context by default", "reach 4155552671 soon", nil, ""},
		{"us national in its grouping", "reach 415-555-2671 soon", nil, "phone@415-555-2671"},
		{"grouped number after an identifier's label", "Ticket #415-555-2671 was closed", nil, ""},
		// Issue 28 (round 3): an identifier's label before national digits makes them an identifier even
		// with a context word near ("number" is one); an international number is not an identifier.
		{"grouped number after an identifier's label, with context", "Order 020 7946 0958, phone the buyer", nil, ""},
		{"international number after an identifier's label", "Order +44 20 7946 0958, phone the buyer", nil, "phone@+44 20 7946 0958"},
		{"label then a word naming a number", "Invoice No. 212 555 0187", nil, ""},
		{"the number of a claim number", "Claim number 0800 123 4567 approved", nil, ""},
		{"german compound label", "Kundennummer: 0800 1234567", nil, ""},
		{"german phone compound", "Telefonnummer 0151 23456789", nil, "phone@0151 23456789"},
		{"weak label after a word naming a number", "Codice cliente 340 123 4567", nil, ""},
		{"weak label before a word naming a number", "Customer No: 415 867 5309", nil, ""},
		{"weak label alone", "Customer John 415-867-5309", nil, "phone@415-867-5309"},
		{"north american groups parted by spaces alone need context", "Pages 201 305 1234 of volume 7", nil, ""},
		{"north american groups parted by spaces, with context", "call 201 305 1234", nil, "phone@201 305 1234"},
		{"a currency before the digits", "Total: € 612 345 678, CHF 912 345 678", nil, ""},
		{"two round figures are not an indian mobile", "Salary band 65000 85000 per annum", nil, ""},
		{"indian mobile grouping", "Rahul 98765 43210", nil, "phone@98765 43210"},
		{"australian mobile grouping", "Mobile 0412 345 678 / parcel 0612 345 678", nil, "phone@0412 345 678"},
		{"a compact date and an hour", "20240315 1030 imported, call", nil, ""},
		{"number of is no context", "The number of visitors rose to 1 234 567", nil, ""},
		{"french label after N°", "N° de facture : 01 23 45 67 89", nil, ""},
		{"log key", "request_id=0412 345 678 latency", nil, ""},
		{"json key", `{"order_id": "0412 345 678", "phone": "0412 345 679"}`, nil, "phone@0412 345 679"},
		{"table row", "| Invoice | 0207 946 0958 |", nil, ""},
		{"caller id is a phone", "Caller ID: 020 7946 0958", nil, "phone@020 7946 0958"},
		{"a phone word ends the label search", "Order hotline 0800 123 4567", nil, "phone@0800 123 4567"},
		{"a unit after the digits", "Duration 01 23 45 67 89 ms", nil, ""},
		{"a currency after the digits", "total 0 712 345 678 EUR", nil, ""},
		{"italian mobile grouping", "Anna Rossi 340 123 4567", nil, "phone@340 123 4567"},
		{"spanish grouping", "Carmen López 612 345 678", nil, "phone@612 345 678"},
		{"trunk area code in parentheses", "Sydney (02) 9374 4000", nil, "phone@(02) 9374 4000"},
		{"us national with context", "call me at (415) 555-2671", nil, "phone@(415) 555-2671"},
		{"us national at min_confidence 0.4", "reach 415-555-2671 soon", map[string]any{"min_confidence": 0.4}, "phone@415-555-2671"},
		{"fr national with context", "téléphone / phone: 01 23 45 67 89", nil, "phone@01 23 45 67 89"},
		{"country not selected", "call me at 01 23 45 67 89", map[string]any{"countries": []any{"US"}}, ""},
		{"date is not a phone", "on 2024-01-15 at noon, call", nil, ""},
		{"version number is not a phone", "call v1.2.3456789", nil, ""},
		{"entity not selected", "jane@example.com", map[string]any{"entities": []any{"phone"}}, ""},
		{"allow_values", "support@example.com", map[string]any{"allow_values": []any{"support@example.com"}}, ""},
		{"extra context word", "reach Zentrale 415-555-2671", map[string]any{"context_words": map[string]any{"phone": []any{"zentrale"}}}, "phone@415-555-2671"},
		// Issue 28: the forms people write numbers in, and what is not one.
		{"extension x", "call (415) 555-2671 x204 today", nil, "phone@(415) 555-2671 x204"},
		{"extension ext.", "phone: 212-555-0187 ext. 12", nil, "phone@212-555-0187 ext. 12"},
		{"extension glued", "desk: +1-903-140-4508x769", nil, "phone@+1-903-140-4508x769"},
		{"trunk zero in parentheses", "Swiss office +41 (0)44 668 18 00, ask for Anna", nil, "phone@+41 (0)44 668 18 00"},
		{"00 international prefix", "dial 0049 30 901820 from abroad", nil, "phone@0049 30 901820"},
		{"local number with context", "Phone:\n467 3395\n", nil, "phone@467 3395"},
		{"local number without context", "room 467 3395 is free", nil, ""},
		{"local number, countries narrowed", "call 467 3395", map[string]any{"countries": []any{"US"}}, ""},
		{"date and hour near call", "released on 2024-03-15 10:30; call support", nil, ""},
		{"day-month-year near phone", "phone us before 15-03-2024", nil, ""},
		{"iban lower case", "pay de89 3704 0044 0532 0130 00 by friday", nil, "iban@de89 3704 0044 0532 0130 00"},
		{"iban lower case, unregistered length", "xx89370400440532013000", all0, ""},
		{"version is not an ip", "Version 1.2.7.1 shipped", all0, ""},
		{"build number is not an ip", "Build 10.0.19045.3803", all0, ""},
		{"maestro with context", "What is the limit for card 501864667909?", nil, "credit_card@501864667909"},
		{"maestro-like without context", "order 501864667909 shipped", nil, ""},
		// Issue 28, held-out families: national groupings without a context word, what ends a number, and
		// the shapes that are not what they look like.
		{"gb grouping", "Tom Reyes, 0161 496 0742, Leeds", nil, "phone@0161 496 0742"},
		{"gb mobile grouping", "ask Priya 07700 900 461", nil, "phone@07700 900 461"},
		{"fr pairs", "Sophie — 06 12 34 56 78", nil, "phone@06 12 34 56 78"},
		{"ch grouping", "Büro Bern 031 310 21 11", nil, "phone@031 310 21 11"},
		{"de area and subscriber", "Praxis Dr. Engel 089 2180713", nil, "phone@089 2180713"},
		{"nanp with trunk 1", "bridge 1 (617) 555-0148 then #", nil, "phone@1 (617) 555-0148"},
		{"parenthesised note ends a number", "front desk +44 20 7946 0958 (mornings)", nil, "phone@+44 20 7946 0958"},
		{"csv comma after a phone", "Ana Ruiz,+44 20 7946 0958,W1", nil, "phone@+44 20 7946 0958"},
		{"csv comma after bare digits continues them", "total 4155552671,25 paid", all0, ""},
		{"ssn after an open parenthesis", "the SSN (536-22-1234 per the form) is wrong", nil, "us_ssn@536-22-1234"},
		{"ssn before a parenthesised note", "SSN 536-22-1234 (corrected)", nil, "us_ssn@536-22-1234"},
		{"ssn grouping is not a phone", "phone log 536-22-1234", map[string]any{"entities": []any{"phone"}, "min_confidence": 0}, ""},
		{"zip+4 is not a phone", "call us, ZIP 90210-1234", map[string]any{"entities": []any{"phone"}, "min_confidence": 0}, ""},
		{"card then expiry and code", "4111 1111 1111 1111 09/27 123", nil, "credit_card@4111 1111 1111 1111"},
		{"card then a short group", "5555 5555 5555 4444 12", nil, "credit_card@5555 5555 5555 4444"},
		{"ipv4 with a port", "proxy 10.1.2.3:3128 is down", map[string]any{"entities": []any{"ip_address"}}, "ip_address@10.1.2.3"},
		{"version-shaped quad", "loaded lib 2.10.3.1 ok", map[string]any{"entities": []any{"ip_address"}}, ""},
		{"version-shaped quad with ip context", "resolver ip 8.8.4.4", map[string]any{"entities": []any{"ip_address"}}, "ip_address@8.8.4.4"},
		{"version key in json", `{"app_version": "14.2.0.17"}`, map[string]any{"entities": []any{"ip_address"}}, ""},
		{"section number", "see section 10.4.2.1 of the contract", map[string]any{"entities": []any{"ip_address"}}, ""},
		{"message id header", "Message-ID: <abc.123@mail.example.org>", nil, ""},
		{"in-reply-to header", "In-Reply-To: <x9@lists.example.net>", nil, ""},
		{"reply-to is an address", "Reply-To: jane.doe@example.org", nil, "email@jane.doe@example.org"},
		{"path before an at sign", "ref INV/2024/77@billing.example.com", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := build(t, tt.cfg)
			fs := e.Scan(tt.text)
			if tt.want == "" {
				if len(fs) != 0 {
					t.Fatalf("findings %+v, want none", fs)
				}
				return
			}
			typ, val, _ := strings.Cut(tt.want, "@")
			if len(fs) != 1 || fs[0].Type != typ || tt.text[fs[0].Start:fs[0].End] != val {
				got := []string{}
				for _, f := range fs {
					got = append(got, f.Type+"@"+tt.text[f.Start:f.End])
				}
				t.Fatalf("findings %v, want %s", got, tt.want)
			}
		})
	}
}

func TestEvaluateReportsWithoutValues(t *testing.T) {
	e := build(t, nil)
	text := "Contact jane@example.com, card 4111111111111111."
	res, err := e.Evaluate(context.Background(), &evaluator.Data{Value: text, Text: text})
	if err != nil || !res.Matched {
		t.Fatalf("%v %v", res, err)
	}
	if strings.Contains(res.Message, "jane") || strings.Contains(res.Message, "4111") {
		t.Fatalf("message echoes a value: %s", res.Message)
	}
	if res.Metadata["finding_count"] != 2 || res.Confidence != 1 {
		t.Fatalf("metadata %v confidence %v", res.Metadata, res.Confidence)
	}
	for _, f := range res.Metadata["findings"].([]any) {
		for _, v := range f.(map[string]any) {
			if s, ok := v.(string); ok && strings.ContainsAny(s, "@0123456789") {
				t.Fatalf("metadata echoes a value: %v", f)
			}
		}
	}
	res, _ = e.Evaluate(context.Background(), &evaluator.Data{})
	if res.Matched {
		t.Fatal("null matched")
	}
}

func TestConfigErrors(t *testing.T) {
	r := evaluator.NewRegistry()
	r.Register(Factory())
	for _, tt := range []struct {
		cfg   map[string]any
		field string
	}{
		{map[string]any{"entities": []any{"dna"}}, "entities.0"},
		{map[string]any{"countries": []any{"XX"}}, "countries.0"},
		{map[string]any{"min_confidence": 2}, "min_confidence"},
		{map[string]any{"context_words": map[string]any{"dna": []any{"x"}}}, "context_words.dna"},
		{map[string]any{"nope": 1}, "nope"},
	} {
		_, err := r.Build(Name, tt.cfg)
		var ce *evaluator.ConfigError
		if !errors.As(err, &ce) {
			t.Fatalf("%v: err %v", tt.cfg, err)
		}
		found := false
		for _, p := range ce.Problems {
			found = found || p.Field == tt.field
		}
		if !found {
			t.Fatalf("%v: problems %v, want %s", tt.cfg, ce.Problems, tt.field)
		}
	}
}

func TestRequiredLiterals(t *testing.T) {
	lits, folds, ok := build(t, map[string]any{"entities": []any{"email"}}).RequiredLiterals()
	if !ok || folds || len(lits) != 1 || lits[0] != "@" {
		t.Fatalf("email only: %v %v %v", lits, folds, ok)
	}
	lits, _, _ = build(t, nil).RequiredLiterals()
	if len(lits) != 11 {
		t.Fatalf("all: %v", lits)
	}
}
