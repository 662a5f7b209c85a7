package secrets

import "strings"

// placeholderWords are guard's additions to gitleaks' global allow list: a secret that contains one of
// them (ASCII case-insensitively) is a placeholder written in documentation, a template or a prompt
// (`sk_test_placeholder`, `ghp_your_token_here`), not a credential. gitleaks' own list already drops values
// made of one repeated character and AWS's documented `...EXAMPLE` keys; these words are long and unusual
// enough never to occur in a random token (the rules' own true positives check it).
var placeholderWords = []string{
	"placeholder", "changeme", "change_me", "redacted", "your_", "your-", "yourkey", "yourtoken", "yoursecret",
	"xxxxxxxx", "********", "<token>", "<secret>", "<key>", "dummy", "fake_", "notreal", "not_a_real",
}

// maskBytes are the characters a key is masked or filled in with in documentation (xxxx, ZZZZ, ****, 0000).
const maskBytes = "xXzZ*#.0_-"

// isPlaceholder reports whether the secret holds one of placeholderWords, or is mostly a mask: a run of one
// of maskBytes over half of it (AKIAZZZZZZZZZZZZZZZZ, AP6xxxxxxxxxx; keys longer than 128 bytes are not
// judged so, as a PEM body or a JWT may hold long runs).
func isPlaceholder(secret string) bool {
	if len(secret) <= 128 {
		longest, run := 0, 0
		for i := 0; i < len(secret); i++ {
			switch {
			case !strings.ContainsRune(maskBytes, rune(secret[i])):
				run = 0
			case i > 0 && secret[i] == secret[i-1]:
				run++
			default:
				run = 1
			}
			longest = max(longest, run)
		}
		if longest >= 5 && 2*longest >= len(secret) {
			return true
		}
	}
	ls := strings.ToLower(secret)
	for _, w := range placeholderWords {
		if strings.Contains(ls, w) {
			return true
		}
	}
	return false
}
