package secrets

import "testing"

func TestReach(t *testing.T) {
	for _, tt := range []struct {
		pattern       string
		before, after int
	}{
		{`ghp_[0-9a-zA-Z]{36}`, 40, 40},
		{`\b(dop_v1_[a-f0-9]{64})(?:[\x60'"\s;]|\\[nr]|$)`, 73, 73},
		{`-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY-----[\s\S-]{64,}?-----END`, maxBefore, maxAfter},
		{`[^a]{10}`, 40, 40}, // a negated class can match 4-byte runes
	} {
		b, a, err := reach(tt.pattern)
		if err != nil || b != tt.before || a != tt.after {
			t.Errorf("reach(%s) = %d, %d, %v; want %d, %d", tt.pattern, b, a, err, tt.before, tt.after)
		}
	}
}

func TestAnchor(t *testing.T) {
	jwt := `\b(ey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9\/\\_-]{17,}\.(?:[a-zA-Z0-9\/\\_-]{10,}={0,2})?)(?:[\x60'"\s;]|\\[nr]|$)`
	for _, tt := range []struct {
		name, pattern string
		keywords      []string
		anchored      bool
		text          string
		at            int
		canStart      bool
	}{
		{"jwt at a word start", jwt, []string{"ey"}, true, "Bearer eyJhbGciOi", 7, true},
		{"jwt keyword inside a word", jwt, []string{"ey"}, true, "the key rotation", 5, false},
		{"jwt keyword in the wrong case", jwt, []string{"ey"}, true, "Eye", 0, false},
		{"case-insensitive literal", `(?i)\b(sg\.[a-z0-9]{5})`, []string{"sg."}, true, "SG.abcde", 0, true},
		{"literal longer than the keyword", `sntrys_eyJpYXQiO[a-z]+`, []string{"sntrys_"}, true, "sntrys_eyJhbG", 0, false},
		{"factored alternation is not anchored", `\b((?:A3T[A-Z0-9]|AKIA|ASIA)[A-Z2-7]{16})\b`, []string{"akia", "asia", "a3t"}, false, "", 0, false},
		{"alternation of literals", `\b((?:hvs\.[\w-]{90,120}|s\.(?i:[a-z0-9]{24})))`, []string{"hvs.", "s."}, true, "token s.AbC", 6, true},
		{"alternation of literals, keyword inside a word", `\b((?:hvs\.[\w-]{90,120}|s\.(?i:[a-z0-9]{24})))`, []string{"hvs.", "s."}, true, "rules. Then", 4, false},
		{"boundary before a non-word byte", `\b-----BEGIN`, []string{"-----begin"}, true, " -----BEGIN", 1, false},
		{"name = value rule is not anchored", `(?i)[\w.-]{0,50}?(?:adobe)(?:[ \t\w.-]{0,20})=([a-f0-9]{32})`, []string{"adobe"}, false, "", 0, false},
		{"keyword not at the start", `\bxoxb-[0-9]{10}`, []string{"b-"}, false, "", 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, ok := anchorOf(tt.pattern, tt.keywords)
			if ok != tt.anchored {
				t.Fatalf("anchored %v, want %v", ok, tt.anchored)
			}
			if ok && a.at(tt.text, tt.at) != tt.canStart {
				t.Errorf("at(%q, %d) = %v, want %v", tt.text, tt.at, !tt.canStart, tt.canStart)
			}
		})
	}
}
