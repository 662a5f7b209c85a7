package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	guard "github.com/guardrail-control/guard"
)

// GrantContextKey is the key of step.context under which an agent presents an approval grant.
const GrantContextKey = "guard_approval_grant"

// A grant is "ga1." + base64url(claims JSON) + "." + base64url(HMAC-SHA256(key, grantMACLabel + the
// claims part)), unpadded. The key is the database's approval secret (server_secrets.approval_hmac), so
// every replica on one database verifies every other's grants and nothing else can make one. The claims
// bind the grant to one step; the server still checks that the request is approved and unused when it
// consumes it (the database decides, not the token).
const (
	grantPrefix   = "ga1."
	grantMACLabel = "guard approval grant v1\n"
	// maxGrantLen bounds what is decoded: a real grant is about 400 characters.
	maxGrantLen = 4096
)

// grantClaims is what a grant is bound to.
type grantClaims struct {
	ID             string `json:"id"`
	Agent          string `json:"agent"`
	ControlID      int64  `json:"control_id"`
	ControlVersion int    `json:"control_version"`
	StepType       string `json:"step_type"`
	StepName       string `json:"step_name"`
	Stage          string `json:"stage"`
	PayloadHash    string `json:"payload_hash"`
	Expires        int64  `json:"exp"` // Unix seconds
}

var b64 = base64.RawURLEncoding

// signGrant returns the grant of an approved request.
func signGrant(key []byte, rec *guard.ApprovalRecord) string {
	c := grantClaims{ID: rec.ID, Agent: rec.AgentName, ControlID: rec.ControlID, ControlVersion: rec.ControlVersion,
		StepType: rec.StepType, StepName: rec.StepName, Stage: string(rec.Stage), PayloadHash: rec.PayloadHash}
	if rec.GrantExpiresAt != nil {
		c.Expires = rec.GrantExpiresAt.Unix()
	}
	raw, _ := json.Marshal(c) // plain strings and integers: cannot fail
	body := grantPrefix + b64.EncodeToString(raw)
	return body + "." + b64.EncodeToString(grantMAC(key, body))
}

func grantMAC(key []byte, body string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(grantMACLabel))
	m.Write([]byte(body))
	return m.Sum(nil)
}

// Why a grant is refused: the text goes back in result.approval.grant_error.
var (
	errGrantNotString = errors.New("the grant must be a string")
	errGrantInvalid   = errors.New("the grant is not valid (not one this server signed, or altered)")
	errGrantExpired   = errors.New("the grant has expired")
	errGrantAgent     = errors.New("the grant was given to another agent")
	errGrantControl   = errors.New("the grant was given for another control")
	errGrantStep      = errors.New("the grant was given for another step or stage")
	errGrantPayload   = errors.New("the grant was given for other arguments (payload hash differs)")
	errGrantChanged   = errors.New("the control changed since the approval")
	errGrantUsed      = errors.New("the grant was already used or its request is no longer approved")
)

// parseGrant checks a grant's signature and expiry and returns its claims.
func parseGrant(key []byte, v any, now time.Time) (*grantClaims, error) {
	tok, ok := v.(string)
	if !ok {
		return nil, errGrantNotString
	}
	if len(tok) > maxGrantLen || !strings.HasPrefix(tok, grantPrefix) {
		return nil, errGrantInvalid
	}
	dot := strings.LastIndexByte(tok, '.')
	if dot < len(grantPrefix) {
		return nil, errGrantInvalid
	}
	mac, err := b64.DecodeString(tok[dot+1:])
	if err != nil || !hmac.Equal(mac, grantMAC(key, tok[:dot])) {
		return nil, errGrantInvalid
	}
	raw, err := b64.DecodeString(tok[len(grantPrefix):dot])
	if err != nil {
		return nil, errGrantInvalid
	}
	var c grantClaims
	if err := json.Unmarshal(raw, &c); err != nil || c.ID == "" {
		return nil, errGrantInvalid
	}
	if now.Unix() >= c.Expires {
		return nil, errGrantExpired
	}
	return &c, nil
}

// bindingError reports whether claims c cover this step: agent, control, step type, name and stage, and
// payload hash (the control's version is checked against the store by the caller).
func (c *grantClaims) bindingError(agent string, controlID int64, step *guard.Step, stage guard.Stage, hash string) error {
	switch {
	case c.Agent != agent:
		return errGrantAgent
	case c.ControlID != controlID:
		return errGrantControl
	case c.StepType != step.Type || c.StepName != step.Name || c.Stage != string(stage):
		return errGrantStep
	case c.PayloadHash != hash:
		return errGrantPayload
	}
	return nil
}
