package server

import (
	"net/http"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
)

// Responses carry, beside guard's own fields, the field names of the reference implementation
// (agent-control) that its SDKs read (docs/compatibility.md). The additions are
// additive only: no guard field is renamed or removed, so guard's client and dashboard are unaffected.

// refServerVersionHeader is the reference implementation's version header, read by its SDKs; the server
// sends it beside VersionHeader on every response, with RefAPIVersion.
const refServerVersionHeader = "X-Agent-Control-Server-Version"

// RefAPIVersion is the version of the reference implementation's API that guard serves (agent-control
// 8.4): the SDKs warn when its major differs from theirs. guard's own version is in VersionHeader and
// GET /health.
const RefAPIVersion = "8.4.0"

// controlOut is a control as GET, PATCH and restore return it, with the reference's id beside control_id.
type controlOut struct {
	guard.ControlRecord
	RefID int64 `json:"id"`
	// Data in the reference's full form (refdata.go).
	Data refData `json:"data"`
	// The reference's cloned_from_control_id: guard does not clone controls.
	ClonedFrom *int64 `json:"cloned_from_control_id"`
}

func toControlOut(rec guard.ControlRecord) controlOut {
	return controlOut{ControlRecord: rec, RefID: rec.ID, Data: refData{rec.Data}}
}

// patchControlOut adds the reference's success flag to the answer of PATCH /controls/{id}.
type patchControlOut struct {
	controlOut
	Success bool `json:"success"`
}

// summaryOut is a row of GET /controls, with the reference's id and used_by_agents_count.
// The reference's other fields are there too: its action (the decision; the steering context is not in
// a summary, so null), and null or false where guard has nothing to say (no clones, templates are
// rendered before they are stored, no policies or target bindings).
type summaryOut struct {
	guard.ControlSummary
	RefID             int64          `json:"id"`
	UsedByAgentsCount int            `json:"used_by_agents_count"`
	Action            *summaryAction `json:"action"`
	ClonedFrom        *int64         `json:"cloned_from_control_id"`
	TemplateBacked    bool           `json:"template_backed"`
	TemplateRendered  *bool          `json:"template_rendered"`
	UsedByAgent       *struct{}      `json:"used_by_agent"`
	Attachments       *struct{}      `json:"attachments"`
}

type summaryAction struct {
	Decision        guard.Decision         `json:"decision"`
	SteeringContext *guard.SteeringContext `json:"steering_context"`
}

func toSummaries(list []guard.ControlSummary) []summaryOut {
	out := make([]summaryOut, len(list))
	for i := range list {
		o := summaryOut{ControlSummary: list[i], RefID: list[i].ID, UsedByAgentsCount: list[i].AgentCount}
		if d := list[i].Decision; d != "" {
			o.Action = &summaryAction{Decision: d}
		}
		out[i] = o
	}
	return out
}

// agentSummaryOut is a row of GET /agents, with the reference's active_controls_count.
// policy_ids is always empty (guard has no policies) and evaluator_count 0 (agents register no evaluators).
type agentSummaryOut struct {
	guard.AgentSummary
	ActiveControlsCount int     `json:"active_controls_count"`
	PolicyIDs           []int64 `json:"policy_ids"`
	EvaluatorCount      int     `json:"evaluator_count"`
}

func toAgentSummaries(list []guard.AgentSummary) []agentSummaryOut {
	out := make([]agentSummaryOut, len(list))
	for i := range list {
		out[i] = agentSummaryOut{AgentSummary: list[i], ActiveControlsCount: list[i].ControlCount, PolicyIDs: []int64{}}
	}
	return out
}

// unlinkResponse is the answer of DELETE /agents/{name}/controls/{id}. The reference's
// removed_direct_association is guard's removed; control_still_active is always false, since guard links
// controls to agents directly (there are no policies through which the control could stay active).
type unlinkResponse struct {
	Success                  bool `json:"success"`
	Removed                  bool `json:"removed"`
	RemovedDirectAssociation bool `json:"removed_direct_association"`
	ControlStillActive       bool `json:"control_still_active"`
}

// deleteControlResponse is the answer of DELETE /controls/{id}: the reference's dissociated_from_agents
// is guard's unlinked_agents; its policy lists are always empty.
type deleteControlResponse struct {
	Success                 bool     `json:"success"`
	UnlinkedAgents          []string `json:"unlinked_agents"`
	DissociatedFromAgents   []string `json:"dissociated_from_agents"`
	DissociatedFromPolicies []int64  `json:"dissociated_from_policies"`
	DissociatedFrom         []int64  `json:"dissociated_from"`
	DetachedTargetBindings  []int64  `json:"detached_target_bindings"` // always empty: no target bindings
}

// versionOut is one version, with the reference's version_num and event_type beside version and event.
type versionOut struct {
	guard.ControlVersion
	VersionNum int    `json:"version_num"`
	EventType  string `json:"event_type"`
}

// agentPoliciesGone answers the reference's /api/v1/agents/{agent_name}/policies (and /policy) routes.
func (s *Server) agentPoliciesGone(w http.ResponseWriter, r *http.Request) {
	s.writeErr(w, r, problem.New(http.StatusNotFound, problem.CodeNotFound,
		"policies are not part of this service: an agent's controls are linked to it directly; list them with "+
			"GET /api/v1/agents/{agent_name}/controls and link one with POST /api/v1/agents/{agent_name}/controls/{control_id}"))
}

// controlBindingsGone answers the reference's /api/v1/control-bindings routes.
func (s *Server) controlBindingsGone(w http.ResponseWriter, r *http.Request) {
	s.writeErr(w, r, problem.New(http.StatusNotFound, problem.CodeNotFound,
		"control bindings (controls bound to a target_type and target_id) are not part of this service: "+
			"controls link to agents directly (POST /api/v1/agents/{agent_name}/controls/{control_id}), "+
			"and the target_type and target_id of an evaluation are ignored"))
}

// policiesGone answers every /api/v1/policies route of the reference implementation.
func (s *Server) policiesGone(w http.ResponseWriter, r *http.Request) {
	s.writeErr(w, r, problem.New(http.StatusNotFound, problem.CodeNotFound,
		"policies are not part of this service: controls link to agents directly "+
			"(POST /api/v1/agents/{agent_name}/controls/{control_id})"))
}
