package client

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/guardrail-control/guard"
)

// approvalMemo remembers the approval requests of steps refused without waiting (Config.ApprovalWait
// off), by step and payload hash, so that the same step tried again after a person approved it in the
// dashboard or the CLI carries the grant by itself: a gateway or a retrying agent need not handle grants.
// Only steps refused this way are looked up; with none remembered, a step costs one atomic load.
type approvalMemo struct {
	n    atomic.Int32
	mu   sync.Mutex
	byID map[string]string // step key -> approval id
}

// maxRememberedApprovals bounds the memo; beyond, new requests are not remembered (their retry opens or
// reuses a request as usual).
const maxRememberedApprovals = 1024

func approvalKey(step *guard.Step, stage guard.Stage) (string, bool) {
	h, err := guard.PayloadHash(step, stage)
	if err != nil {
		return "", false
	}
	return string(stage) + "\x00" + step.Type + "\x00" + step.Name + "\x00" + h, true
}

func (m *approvalMemo) remember(step *guard.Step, stage guard.Stage, id string) {
	key, ok := approvalKey(step, stage)
	if !ok {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byID == nil {
		m.byID = map[string]string{}
	}
	if _, had := m.byID[key]; !had && len(m.byID) >= maxRememberedApprovals {
		return
	}
	m.byID[key] = id
	m.n.Store(int32(len(m.byID)))
}

func (m *approvalMemo) forget(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.byID, key)
	m.n.Store(int32(len(m.byID)))
}

// rememberedGrant returns the grant of an approved request remembered for this step, or "". A request
// that was rejected or expired is forgotten; a used grant is forgotten once the step ran (forgetStep).
func (a *Agent) rememberedGrant(ctx context.Context, step *guard.Step, stage guard.Stage) string {
	if a.approvals.n.Load() == 0 {
		return ""
	}
	key, ok := approvalKey(step, stage)
	if !ok {
		return ""
	}
	a.approvals.mu.Lock()
	id := a.approvals.byID[key]
	a.approvals.mu.Unlock()
	if id == "" {
		return ""
	}
	got, err := a.api.GetApproval(ctx, id, 0)
	if err != nil {
		return "" // the server decides without the grant: a new or the pending request
	}
	switch {
	case got.Status == guard.ApprovalApproved && got.Grant != "":
		return got.Grant
	case got.Status == guard.ApprovalPending:
		return ""
	}
	a.approvals.forget(key)
	return ""
}

// forgetStep drops what is remembered for this step (its grant was used).
func (a *Agent) forgetStep(step *guard.Step, stage guard.Stage) {
	if a.approvals.n.Load() == 0 {
		return
	}
	if key, ok := approvalKey(step, stage); ok {
		a.approvals.forget(key)
	}
}

// withGrant returns a copy of step whose context carries grant.
func withGrant(step *guard.Step, grant string) *guard.Step {
	cp := *step
	cp.Context = make(map[string]any, len(step.Context)+1)
	for k, v := range step.Context {
		cp.Context[k] = v
	}
	cp.Context[GrantContextKey] = grant
	return &cp
}
