package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash"
	"strconv"
	"strings"
	"sync"
	"time"

	guard "github.com/guardrail-control/guard"
)

// GrantContextKey is the key of step.context under which an agent presents an approval grant.
const GrantContextKey = "guard_approval_grant"

// A grant is "ga1.<approval id>.<control version>.<expiry, Unix seconds>.<MAC>", the MAC being the
// unpadded base64url HMAC-SHA256, keyed by the database's approval secret (server_secrets.approval_hmac,
// kept like the cursor secret: every replica on one database verifies every other's grants), over
// grantMACLabel and, each as a uvarint length then its bytes, the approval id, agent name, control id,
// control version, step type, step name, stage, payload hash and expiry (decimal), then, for a request that
// covers several approval controls, the id and version (decimal) of each further control, in the
// request's order (a grant of one control is signed as before them). The token carries only
// what the presenting step cannot say itself (which request, which control version, until when): the rest
// is taken from the step being evaluated, so a grant verifies only for the step it was given for, and
// checking it needs no decoding. Whether the request is still approved and unused is the database's to
// say, when the grant is consumed.
const (
	grantPrefix   = "ga1."
	grantMACLabel = "guard approval grant v1"
	// maxGrantLen bounds what is parsed: a real grant is about 100 characters.
	maxGrantLen = 256
)

// grantFields are the fields a grant's MAC covers.
type grantFields struct {
	id, agent                 string
	controlID                 int64
	version                   int
	stepType, stepName, stage string
	payloadHash               string
	expires                   int64
	// further are the controls the request covers beside controlID (their ids and versions are signed).
	further []guard.ApprovalControl
}

var b64 = base64.RawURLEncoding

// macs pools keyed HMAC states per key (the key is the database's: one in practice), so that checking a
// grant costs no hash allocation.
var macs sync.Map // string(key) -> *sync.Pool of hash.Hash

func grantMAC(key []byte, f *grantFields) [sha256.Size]byte {
	p, ok := macs.Load(string(key))
	if !ok {
		k := append([]byte(nil), key...)
		p, _ = macs.LoadOrStore(string(key), &sync.Pool{New: func() any { return hmac.New(sha256.New, k) }})
	}
	pool := p.(*sync.Pool)
	m := pool.Get().(hash.Hash)
	m.Reset()
	var buf [256]byte
	b := buf[:0]
	put := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		if len(b)+len(s) > cap(b) {
			m.Write(b)
			m.Write([]byte(s))
			b = b[:0]
			return
		}
		b = append(b, s...)
	}
	put(grantMACLabel)
	put(f.id)
	put(f.agent)
	var num [20]byte
	put(string(strconv.AppendInt(num[:0], f.controlID, 10)))
	put(string(strconv.AppendInt(num[:0], int64(f.version), 10)))
	put(f.stepType)
	put(f.stepName)
	put(f.stage)
	put(f.payloadHash)
	put(string(strconv.AppendInt(num[:0], f.expires, 10)))
	for i := range f.further {
		put(string(strconv.AppendInt(num[:0], f.further[i].ControlID, 10)))
		put(string(strconv.AppendInt(num[:0], int64(f.further[i].ControlVersion), 10)))
	}
	m.Write(b)
	var out [sha256.Size]byte
	m.Sum(out[:0])
	pool.Put(m)
	return out
}

// signGrant returns the grant of an approved request.
func signGrant(key []byte, rec *guard.ApprovalRecord) string {
	f := grantFields{id: rec.ID, agent: rec.AgentName, controlID: rec.ControlID, version: rec.ControlVersion,
		stepType: rec.StepType, stepName: rec.StepName, stage: string(rec.Stage), payloadHash: rec.PayloadHash}
	if len(rec.Controls) > 1 {
		f.further = rec.Controls[1:]
	}
	if rec.GrantExpiresAt != nil {
		f.expires = rec.GrantExpiresAt.Unix()
	}
	mac := grantMAC(key, &f)
	return grantPrefix + f.id + "." + strconv.Itoa(f.version) + "." + strconv.FormatInt(f.expires, 10) + "." + b64.EncodeToString(mac[:])
}

// Why a grant is refused: the text goes back in result.approval.grant_error.
var (
	errGrantNotString = errors.New("the grant must be a string")
	errGrantInvalid   = errors.New("the grant is not valid (not one this server signed, or altered)")
	errGrantExpired   = errors.New("the grant has expired")
	errGrantAgent     = errors.New("the grant was given to another agent")
	errGrantControl   = errors.New("the grant was given for another control")
	errGrantSet       = errors.New("the grant was given for other approval controls (the controls that refuse the step changed since the approval)")
	errGrantStep      = errors.New("the grant was given for another step or stage")
	errGrantPayload   = errors.New("the grant was given for other arguments (payload hash differs)")
	errGrantChanged   = errors.New("the control changed since the approval")
	errGrantUsed      = errors.New("the grant was already used or its request is no longer approved")
)

// grantToken is a parsed, not yet verified, grant.
type grantToken struct {
	id      string
	version int
	expires int64
	mac     [sha256.Size]byte
}

// parseGrant splits a grant into its parts (errGrantInvalid when it is not shaped like one).
func parseGrant(v any) (*grantToken, error) {
	tok, ok := v.(string)
	if !ok {
		return nil, errGrantNotString
	}
	if len(tok) > maxGrantLen || !strings.HasPrefix(tok, grantPrefix) {
		return nil, errGrantInvalid
	}
	parts := [4]string{}
	rest := tok[len(grantPrefix):]
	for i := range 3 {
		dot := strings.IndexByte(rest, '.')
		if dot <= 0 {
			return nil, errGrantInvalid
		}
		parts[i], rest = rest[:dot], rest[dot+1:]
	}
	parts[3] = rest
	g := &grantToken{id: parts[0]}
	var err error
	if g.version, err = strconv.Atoi(parts[1]); err != nil || g.version < 0 {
		return nil, errGrantInvalid
	}
	if g.expires, err = strconv.ParseInt(parts[2], 10, 64); err != nil {
		return nil, errGrantInvalid
	}
	if b64.DecodedLen(len(parts[3])) != sha256.Size {
		return nil, errGrantInvalid
	}
	if n, err := b64.Decode(g.mac[:], []byte(parts[3])); err != nil || n != sha256.Size {
		return nil, errGrantInvalid
	}
	if !g.canonical(parts[1], parts[2], parts[3]) {
		return nil, errGrantInvalid
	}
	return g, nil
}

// canonical reports whether the version, expiry and MAC of a grant are spelled as signGrant spells what
// was parsed from them. strconv accepts "01", "+1" and "-0", and base64 ignores the unused low bits of
// the last character, while the MAC covers the numbers re-encoded: without this check one grant would
// have several spellings, each accepted (docs/approvals.md, "What a grant is bound to").
func (g *grantToken) canonical(version, expires, mac string) bool {
	var buf [b64MACLen]byte
	if string(strconv.AppendInt(buf[:0], int64(g.version), 10)) != version ||
		string(strconv.AppendInt(buf[:0], g.expires, 10)) != expires {
		return false
	}
	b64.Encode(buf[:], g.mac[:])
	return string(buf[:]) == mac
}

// b64MACLen is the length of a MAC in a grant: 32 bytes in unpadded base64.
const b64MACLen = (sha256.Size*8 + 5) / 6

// verify reports whether g was signed for this step: agent, the approval controls that refuse it (set:
// the deciding one first, then the further ones with their versions), step type, name and stage, payload
// hash (and the id, version and expiry it carries), then whether it is still valid at now.
func (g *grantToken) verify(key []byte, agent string, set []guard.ApprovalControl, step *guard.Step, stage guard.Stage, hash string, now time.Time) (ok bool, err error) {
	want := grantMAC(key, &grantFields{id: g.id, agent: agent, controlID: set[0].ControlID, version: g.version,
		stepType: step.Type, stepName: step.Name, stage: string(stage), payloadHash: hash, expires: g.expires, further: set[1:]})
	if !hmac.Equal(want[:], g.mac[:]) {
		return false, nil
	}
	if now.Unix() >= g.expires {
		return true, errGrantExpired
	}
	return true, nil
}

// mismatch says why a grant whose MAC does not verify for this step was refused: against the request it
// names, which binding differs; a grant that names no request, or whose request matches this step, was
// forged or altered.
func mismatch(rec *guard.ApprovalRecord, agent string, set []guard.ApprovalControl, step *guard.Step, stage guard.Stage, hash string) error {
	switch {
	case rec == nil:
		return errGrantInvalid
	case rec.AgentName != agent:
		return errGrantAgent
	case rec.ControlID != set[0].ControlID && len(rec.Controls) <= 1 && len(set) == 1:
		return errGrantControl
	case !sameControls(rec.Controls, set):
		return errGrantSet
	case !sameVersions(rec.Controls[1:], set[1:]):
		return errGrantChanged
	case rec.StepType != step.Type || rec.StepName != step.Name || rec.Stage != stage:
		return errGrantStep
	case rec.PayloadHash != hash:
		return errGrantPayload
	}
	return errGrantInvalid
}

// sameControls reports whether a request's controls are the ids of set, in its order.
func sameControls(recorded, set []guard.ApprovalControl) bool {
	if len(recorded) != len(set) {
		return false
	}
	for i := range set {
		if recorded[i].ControlID != set[i].ControlID {
			return false
		}
	}
	return true
}

// sameVersions reports whether the controls of a and b (the same ids) are at the same versions.
func sameVersions(a, b []guard.ApprovalControl) bool {
	for i := range a {
		if a[i].ControlVersion != b[i].ControlVersion {
			return false
		}
	}
	return true
}
