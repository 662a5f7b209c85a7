package evaluator

import (
	"errors"
	"strings"
	"testing"

	regexp2syntax "github.com/dlclark/regexp2/syntax"
)

// TestRegexp2MessagesNeverEchoThePattern: whatever regexp2 puts in an error (the pattern, names and
// escapes from it as format arguments), the message is the kind of error only.
func TestRegexp2MessagesNeverEchoThePattern(t *testing.T) {
	const secret = "zqsecret"
	codes := []regexp2syntax.ErrorCode{regexp2syntax.ErrInternalError, "some future error %v"}
	for c := range regexp2Kinds {
		codes = append(codes, c)
	}
	for _, c := range codes {
		msg := regexp2Message(&regexp2syntax.Error{Code: c, Expr: secret, Args: []any{secret, 'z', 'q'}})
		if msg == "" || strings.Contains(msg, secret) || strings.Contains(msg, "%") {
			t.Errorf("%q: message %q", c, msg)
		}
	}
}

// TestInvalidPatternsNameTheKind: through NewRegex, on both engines' parse paths.
func TestInvalidPatternsNameTheKind(t *testing.T) {
	tests := []struct{ pattern, kind string }{
		{`zqsecret(`, "missing closing )"},
		{`(?=a)\k<zqsecret>`, "back-reference to an undefined group name"},
		{`(?=a)\p{Zqsecret}`, "unknown Unicode category"},
		{`(?=a)[zq-a]`, "reverse order"},
	}
	for _, tt := range tests {
		_, err := NewRegex(tt.pattern, false, false, false, 0)
		var fe FieldError
		if !errors.As(err, &fe) || fe.Code != "invalid_regex" || !strings.Contains(fe.Message, tt.kind) {
			t.Errorf("%s: %v", tt.pattern, err)
			continue
		}
		if strings.Contains(strings.ToLower(fe.Message), "zq") {
			t.Errorf("%s: message echoes the pattern: %q", tt.pattern, fe.Message)
		}
	}
}
