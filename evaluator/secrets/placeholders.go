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

// isPlaceholder reports whether the secret holds one of placeholderWords.
func isPlaceholder(secret string) bool {
	ls := strings.ToLower(secret)
	for _, w := range placeholderWords {
		if strings.Contains(ls, w) {
			return true
		}
	}
	return false
}
