package server

import (
	"net/http"

	"github.com/guardrail-control/guard/server/problem"
)

// agentConfigOut is the answer of GET /agents/{agent_name}/config: the reference implementation's
// GetAgentConfigResponse for an agent without a managed configuration (no system prompt, no model, at
// version 0). guard manages neither, so every registered agent has this answer: the reference SDK's
// init() reads it at start and keeps what its code declares.
type agentConfigOut struct {
	AgentName         string  `json:"agent_name"`
	Body              *string `json:"body"`
	BodyFormat        string  `json:"body_format"`
	PromptEnabled     bool    `json:"prompt_enabled"`
	PromptSource      string  `json:"prompt_source"`
	ModelID           *string `json:"model_id"`
	ModelProvider     *string `json:"model_provider"`
	ModelAllowed      bool    `json:"model_allowed"`
	ModelCostTier     *string `json:"model_cost_tier"`
	ModelSource       string  `json:"model_source"`
	DeliveryState     string  `json:"delivery_state"`
	ETag              *string `json:"etag"`
	CurrentVersion    int     `json:"current_version"`
	SourceInstruction *string `json:"source_instruction"`
	SourceReportedAt  *string `json:"source_reported_at"`
	UpdatedByHash     *string `json:"updated_by_hash"`
	CreatedAt         *string `json:"created_at"`
	UpdatedAt         *string `json:"updated_at"`
}

// getAgentConfig is GET /agents/{agent_name}/config: an agent name that breaks the naming rules is a 422,
// an agent that is not registered a 404 AGENT_NOT_FOUND, as in the reference; a registered one has no
// managed configuration. delivery_state says, as the reference does, that nothing would be delivered by
// a server without authentication (blocked_insecure_auth).
func (s *Server) getAgentConfig(w http.ResponseWriter, r *http.Request) {
	name, err := pathAgent(r)
	if err == nil {
		_, _, err = s.store.GetAgent(r.Context(), name)
	}
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	delivery := "active"
	if !s.auth.enabled {
		delivery = "blocked_insecure_auth"
	}
	problem.Respond(w, r, s.log, http.StatusOK, agentConfigOut{AgentName: name, BodyFormat: "text", PromptEnabled: true,
		PromptSource: "none", ModelAllowed: true, ModelSource: "code", DeliveryState: delivery})
}

// controlSchemaNotFound answers /controls/schema, which is not a control id: guard serves no schema
// there (control data is described by the OpenAPI document and docs/control-language.md).
func (s *Server) controlSchemaNotFound(w http.ResponseWriter, r *http.Request) {
	s.writeErr(w, r, problem.New(http.StatusNotFound, problem.CodeNotFound,
		"there is no /controls/schema: control data is described by the OpenAPI document (/openapi.json, "+
			"components.schemas.ControlData) and checked by POST /api/v1/controls/validate"))
}
