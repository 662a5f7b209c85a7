package guard

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// Approval, on a control whose decision blocks (deny or steer), asks for a person to decide the step the
// control refused: the step is refused as without it, and the result carries an approval request
// (Result.Approval) that the server stores, notifies and lets an approver decide. An approved request
// yields a grant bound to this exact step (docs/control-language.md, Approval; docs/approvals.md).
type Approval struct {
	// TTLSeconds is how long the request stays open to be decided, and how long its grant stays valid
	// after the approval: DefaultApprovalTTL when 0, at most MaxApprovalTTL.
	TTLSeconds int `json:"ttl_seconds,omitempty"`
	// Message is shown to the approver (the webhook, the inbox) above the step's arguments.
	Message string `json:"message,omitempty"`
	// Approvers name who should decide (free text: a team, a channel, people); they are shown with the
	// request and sent in the webhook.
	Approvers []string `json:"approvers,omitempty"`
}

// Bounds of action.approval.
const (
	DefaultApprovalTTL       = 3600
	MaxApprovalTTL           = 7 * 24 * 3600
	MaxApprovalMessageLength = 1024
	MaxApprovers             = 20
	MaxApproverLength        = 128
)

// Approval statuses in Result.Approval.Status.
const (
	// ApprovalRequired: the step was refused by a control with action.approval; a person may approve it.
	ApprovalRequired = "required"
	// ApprovalGranted: a presented grant let the control's refusal through, once.
	ApprovalGranted = "granted"
)

// TTL returns the request's time to live: TTLSeconds, or DefaultApprovalTTL when it is 0.
func (a *Approval) TTL() time.Duration {
	if a == nil || a.TTLSeconds <= 0 {
		return DefaultApprovalTTL * time.Second
	}
	return time.Duration(a.TTLSeconds) * time.Second
}

// ApprovalRequest is what an evaluation result says about approval (Result.Approval): the control that
// asked for it and, once the server stored the request, its id, expiry and where to decide it. The
// engine fills the control's part; the server the rest. Old clients ignore the field and see the deny or
// steer they always saw.
type ApprovalRequest struct {
	// Status is ApprovalRequired or ApprovalGranted.
	Status      string `json:"status"`
	ID          string `json:"id,omitempty"`
	ControlID   int64  `json:"control_id"`
	ControlName string `json:"control_name"`
	// Message is the control's approval message, else its refusal's reason.
	Message   string     `json:"message,omitempty"`
	Approvers []string   `json:"approvers,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// URL is where the request is read and decided (GET and POST /api/v1/approvals/{id}).
	URL string `json:"url,omitempty"`
	// PayloadHash is the canonical hash of the stage's payload the request (or grant) is bound to
	// (PayloadHash).
	PayloadHash string `json:"payload_hash,omitempty"`
	// GrantError says why a grant presented with the step did not let it through.
	GrantError string `json:"grant_error,omitempty"`
	// Controls lists every control with action.approval that refuses the step, the deciding one
	// (ControlID) first, when there are several: one request covers them all, one decision decides it, one
	// grant lets them all through (docs/approvals.md). Absent when one control asks.
	Controls []ApprovalControl `json:"controls,omitempty"`

	// TTL is the control's approval TTL (not on the wire: ExpiresAt is).
	TTL time.Duration `json:"-"`
}

// ApprovalControl is one of the controls an approval request covers: with its version (a grant holds
// only while every one of them is at the version it was approved at), its message and approvers.
type ApprovalControl struct {
	ControlID      int64  `json:"control_id"`
	ControlVersion int    `json:"control_version"`
	ControlName    string `json:"control_name"`
	// Message is the control's approval message, else its refusal's reason.
	Message   string   `json:"message,omitempty"`
	Approvers []string `json:"approvers,omitempty"`
	// TTL is the control's approval TTL (not on the wire).
	TTL time.Duration `json:"-"`
}

// parse action.approval: strict, only with a decision that blocks.
func (p *parser) approval(v any, path string, decision Decision) *Approval {
	obj, ok := p.object(v, path, "ttl_seconds", "message", "approvers")
	if !ok {
		return nil
	}
	a := &Approval{}
	if tv := obj["ttl_seconds"]; tv != nil {
		tp := join(path, "ttl_seconds")
		f, isNum := tv.(float64)
		switch {
		case !isNum:
			p.add(tp, CodeType, "must be a number")
		case f != math.Trunc(f) || f < 1 || f > MaxApprovalTTL:
			p.add(tp, CodeInvalid, "must be a whole number of seconds from 1 to 604800 (7 days)")
		default:
			a.TTLSeconds = int(f)
		}
	}
	if mv := obj["message"]; mv != nil {
		mp := join(path, "message")
		if s, ok := p.str(mv, mp); ok {
			switch n := utf8.RuneCountInString(s); {
			case strings.TrimSpace(s) == "":
				p.add(mp, CodeEmpty, "must not be empty (omit it for the refusal's reason)")
			case n > MaxApprovalMessageLength:
				p.add(mp, CodeTooLong, fmt.Sprintf("must be at most %d characters", MaxApprovalMessageLength))
			}
			a.Message = s
		}
	}
	if av := obj["approvers"]; av != nil {
		ap := join(path, "approvers")
		if l, ok := av.([]any); ok && len(l) > MaxApprovers {
			p.add(ap, CodeTooLong, fmt.Sprintf("must name at most %d approvers", MaxApprovers))
		} else {
			a.Approvers = p.strList(av, ap, false, func(s, ip string) {
				switch n := utf8.RuneCountInString(s); {
				case strings.TrimSpace(s) == "":
					p.add(ip, CodeEmpty, "must not be empty")
				case n > MaxApproverLength:
					p.add(ip, CodeTooLong, fmt.Sprintf("must be at most %d characters", MaxApproverLength))
				}
			})
			if len(a.Approvers) == 0 {
				a.Approvers = nil
			}
		}
	}
	if decision != DecisionDeny && decision != DecisionSteer && decision != "" {
		p.add(path, CodeConflict, "approval needs a decision that blocks the step (deny or steer); "+
			string(decision)+" lets it through")
	}
	return a
}

// approvalTree is action.approval in decoded form (validate_tree.go).
func (b *treeBuilder) approvalTree(a *Approval) map[string]any {
	b.at(2)
	m := b.newMap()
	if a.TTLSeconds != 0 {
		m["ttl_seconds"] = float64(a.TTLSeconds)
	}
	if a.Message != "" {
		m["message"] = b.str(a.Message)
	}
	if a.Approvers != nil {
		b.at(3)
		if l := b.strList(a.Approvers, true); l != nil {
			m["approvers"] = l
		}
	}
	return m
}

// markApproval sets res.Approval when the control that decided res (w, a genuine match: a control that
// failed closed asks no one) carries action.approval. It runs only for a blocking decision of a snapshot
// with such controls: the others pay one flag test.
func (b *resultBuilder) markApproval(w *ControlResult) {
	for i := range b.snap.controls {
		c := &b.snap.controls[i]
		if c.id != w.ControlID || c.approval == nil {
			continue
		}
		msg := c.approval.Message
		if msg == "" {
			msg = b.res.Reason
		}
		b.res.Approval = &ApprovalRequest{Status: ApprovalRequired, ControlID: c.id, ControlName: c.name,
			Message: msg, Approvers: c.approval.Approvers, TTL: c.approval.TTL()}
		return
	}
}
