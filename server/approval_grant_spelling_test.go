package server

import (
	"strings"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
)

// respell returns grant with its part i (0 "ga1", 1 id, 2 version, 3 expiry, 4 MAC) passed through f.
func respell(grant string, i int, f func(string) string) string {
	parts := strings.Split(grant, ".")
	parts[i] = f(parts[i])
	return strings.Join(parts, ".")
}

// otherPaddingBits changes the last character of an unpadded base64url MAC of 32 bytes (43 characters,
// 258 bits for 256) only in its 2 unused low bits: it decodes to the same bytes.
func otherPaddingBits(mac string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, mac[len(mac)-1])
	return mac[:len(mac)-1] + string(alphabet[last^1])
}

// grantRespellings are spellings of one grant that decode to the same values: each must be refused
// (docs/approvals.md: a grant has one spelling; anything altered is not valid).
func grantRespellings(grant string) map[string]string {
	return map[string]string{
		"MAC with non-zero padding bits": respell(grant, 4, otherPaddingBits),
		"version with a leading zero":    respell(grant, 2, func(s string) string { return "0" + s }),
		"version with a plus sign":       respell(grant, 2, func(s string) string { return "+" + s }),
		"expiry with a leading zero":     respell(grant, 3, func(s string) string { return "0" + s }),
		"expiry with a plus sign":        respell(grant, 3, func(s string) string { return "+" + s }),
	}
}

// TestParseGrantOneSpelling: parseGrant accepts a grant as signGrant writes it and refuses every other
// spelling of the same values.
func TestParseGrantOneSpelling(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	exp := time.Unix(1796169601, 0)
	rec := guard.ApprovalRecord{ID: "5b0c8a52-4f8e-4b7e-9d6a-0f3b1a2c3d4e", AgentName: "support-bot", ControlID: 7,
		ControlVersion: 3, StepType: "tool", StepName: "refund", Stage: guard.StagePre, PayloadHash: "sha256:00", GrantExpiresAt: &exp}
	grant := signGrant(key, &rec)
	if _, err := parseGrant(grant); err != nil {
		t.Fatalf("the grant as signed: %v", err)
	}
	for name, g := range grantRespellings(grant) {
		if g == grant {
			t.Fatalf("%s: not a respelling", name)
		}
		if _, err := parseGrant(g); err != errGrantInvalid {
			t.Errorf("%s (%s): %v, want errGrantInvalid", name, g, err)
		}
	}
	// "-0" and "00" for a zero version.
	rec.ControlVersion = 0
	zero := signGrant(key, &rec)
	if _, err := parseGrant(zero); err != nil {
		t.Fatalf("version 0: %v", err)
	}
	for _, v := range []string{"-0", "00", "+0"} {
		if _, err := parseGrant(respell(zero, 2, func(string) string { return v })); err != errGrantInvalid {
			t.Errorf("version %q: %v, want errGrantInvalid", v, err)
		}
	}
}

// TestGrantRespellingsRefused: a real grant from the server, respelled, is refused as not valid on
// POST /evaluation and not consumed: the genuine grant still runs the step once afterwards.
func TestGrantRespellingsRefused(t *testing.T) {
	a := newApprovalTS(t, 0)
	a.setup("bot-a")
	id := approvalOf(t, a.refund("bot-a", 2500, nil))["id"].(string)
	grant := a.approve(id)
	for name, g := range grantRespellings(grant) {
		t.Run(name, func(t *testing.T) {
			res := a.refund("bot-a", 2500, map[string]any{GrantContextKey: g})
			if decision(res) != "deny" || approvalOf(t, res)["grant_error"] != errGrantInvalid.Error() {
				t.Fatalf("%s: %v", g, res)
			}
		})
	}
	if res := a.refund("bot-a", 2500, map[string]any{GrantContextKey: grant}); decision(res) != "allow" {
		t.Fatalf("the genuine grant: %v", res)
	}
}
