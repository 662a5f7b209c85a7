package server

import (
	"fmt"
	"net/http"
	"strconv"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
)

// agentIn is the agent object of POST /agents/initAgent.
type agentIn struct {
	Name        string         `json:"agent_name"`
	Description string         `json:"agent_description"`
	Version     string         `json:"agent_version"`
	Metadata    map[string]any `json:"agent_metadata"`
}

type initAgentRequest struct {
	Agent *agentIn           `json:"agent"`
	Steps []guard.StepSchema `json:"steps"`
	// Tools is another name of Steps (the reference's "steps / tools"); giving both is a 422.
	Tools        *[]guard.StepSchema `json:"tools"`
	ConflictMode string              `json:"conflict_mode"`
}

type initAgentResponse struct {
	Created  bool              `json:"created"`
	Agent    agentOut          `json:"agent"`
	Controls []agentControlOut `json:"controls"`
	// The reference's account of what the registration changed (refagents.go); overwrite_applied is
	// true when conflict_mode overwrite changed a registered agent.
	OverwriteApplied bool             `json:"overwrite_applied"`
	OverwriteChanges overwriteChanges `json:"overwrite_changes"`
}

type agentResponse struct {
	Agent    guard.Agent          `json:"agent"`
	Steps    []guard.StepSchema   `json:"steps"`
	Controls []guard.AgentControl `json:"controls,omitempty"`
}

type patchAgentRequest struct {
	Description *string         `json:"agent_description"`
	Version     *string         `json:"agent_version"`
	Metadata    map[string]any  `json:"agent_metadata"`
	RemoveSteps []guard.StepRef `json:"remove_steps"`
}

type successResponse struct {
	Success bool `json:"success"`
}

func (s *Server) listAgents(w http.ResponseWriter, r *http.Request) {
	pg, err := page(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	name, err := guard.NormalizeAgentNameFilter(r.URL.Query().Get("name"))
	if err != nil {
		s.writeErr(w, r, invalidParam("name", "invalid", err.Error()))
		return
	}
	sc, err := s.agentScope(r.Context())
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	agents, info, err := s.store.ListAgents(r.Context(), guard.AgentFilter{Name: name, Scope: sc}, pg)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if agents == nil {
		agents = []guard.AgentSummary{}
	}
	problem.Respond(w, r, s.log, http.StatusOK, struct {
		Agents     []agentSummaryOut `json:"agents"`
		Pagination listPage          `json:"pagination"`
	}{toAgentSummaries(agents), toPage(info)})
}

func (s *Server) initAgent(w http.ResponseWriter, r *http.Request) {
	var req initAgentRequest
	if err := s.decodeLenient(w, r, &req); err != nil {
		s.writeErr(w, r, err)
		return
	}
	in, err := validateInitAgent(&req)
	if err == nil {
		err = checkAgent(r.Context(), in.Agent.Name, "agent.agent_name")
	}
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	before, oldSteps, err := s.registeredBefore(r.Context(), in.Agent.Name)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	// conflict_mode overwrite replaces a registration (steps removed, schemas and metadata replaced): as in
	// the reference implementation, only an admin key may. A regular key may still create an agent,
	// re-register one unchanged, or add steps (what strict mode allows it anyway: an MCP gateway whose
	// server gained a tool, a client at every start).
	if in.ConflictMode == guard.ConflictOverwrite && before != nil && s.auth.enabled {
		ch := diffRegistration(before, oldSteps, in.Agent, in.Steps)
		if e := identityOf(r.Context()); (e == nil || !e.admin) && ch.replaces() {
			s.writeErr(w, r, problem.New(http.StatusForbidden, problem.CodeAuthInsufficient,
				"conflict_mode overwrite would change this agent's registration: that needs an admin API key (a regular key may add steps with conflict_mode strict)"))
			return
		}
	}
	created, agent, err := s.store.InitAgent(r.Context(), in)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.cache.invalidate()
	_, newSteps, err := s.store.GetAgent(r.Context(), agent.Name)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	controls, _, err := s.store.AgentControls(r.Context(), agent.Name)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if created {
		before = nil
	}
	changes := diffRegistration(before, oldSteps, agent, newSteps)
	s.noteSDK(r, agent.Name)
	problem.Respond(w, r, s.log, http.StatusOK, initAgentResponse{Created: created, Agent: toAgentOut(agent), Controls: toAgentControls(controls),
		OverwriteApplied: !created && in.ConflictMode == guard.ConflictOverwrite && changes.any(), OverwriteChanges: changes})
}

// validateInitAgent checks the request and returns the store input, listing every problem at once.
func validateInitAgent(req *initAgentRequest) (guard.AgentInit, error) {
	var probs []guard.Problem
	in := guard.AgentInit{ConflictMode: guard.ConflictStrict}
	if req.Agent == nil {
		probs = append(probs, guard.Problem{Field: "agent", Code: "required", Message: "is required"})
	} else {
		name, err := guard.NormalizeAgentName(req.Agent.Name)
		if err != nil {
			probs = append(probs, guard.Problem{Field: "agent.agent_name", Code: "invalid", Message: err.Error()})
		}
		in.Agent = guard.Agent{Name: name, Description: req.Agent.Description, Version: req.Agent.Version, Metadata: req.Agent.Metadata}
	}
	switch req.ConflictMode {
	case "", string(guard.ConflictStrict):
	case string(guard.ConflictOverwrite):
		in.ConflictMode = guard.ConflictOverwrite
	default:
		probs = append(probs, guard.Problem{Field: "conflict_mode", Code: "enum", Message: "must be one of strict, overwrite"})
	}
	stepsField := "steps"
	if req.Tools != nil {
		if req.Steps != nil {
			probs = append(probs, guard.Problem{Field: "tools", Code: "conflict", Message: "tools is another name of steps: give one of them, not both"})
			return in, problem.Validation("the agent registration is not valid", probs...)
		}
		req.Steps, stepsField = *req.Tools, "tools"
		if req.Steps == nil {
			req.Steps = []guard.StepSchema{}
		}
	}
	if len(req.Steps) > guard.MaxAgentSteps {
		probs = append(probs, guard.Problem{Field: stepsField, Code: guard.CodeTooLong, Message: fmt.Sprintf("must have at most %d steps", guard.MaxAgentSteps)})
		return in, problem.Validation("the agent registration is not valid", probs...)
	}
	seen := make(map[guard.StepRef]bool, len(req.Steps))
	for i, st := range req.Steps {
		p := stepsField + "." + strconv.Itoa(i)
		if st.Type == "" {
			probs = append(probs, guard.Problem{Field: p + ".type", Code: "required", Message: "must be a non-empty string"})
		}
		if st.Name == "" {
			probs = append(probs, guard.Problem{Field: p + ".name", Code: "required", Message: "must be a non-empty string"})
		}
		ref := guard.StepRef{Type: st.Type, Name: st.Name}
		if st.Type != "" && st.Name != "" && seen[ref] {
			probs = append(probs, guard.Problem{Field: p, Code: "duplicate", Message: "repeats the (type, name) of an earlier step"})
		}
		seen[ref] = true
	}
	probs = append(probs, stepLabelProblems(req.Steps, stepsField)...)
	if len(probs) > 0 {
		return in, problem.Validation("the agent registration is not valid", probs...)
	}
	in.Steps = req.Steps
	if in.Steps == nil {
		in.Steps = []guard.StepSchema{}
	}
	return in, nil
}

func (s *Server) getAgent(w http.ResponseWriter, r *http.Request) {
	name, err := pathAgent(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	agent, steps, err := s.store.GetAgent(r.Context(), name)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	controls, _, err := s.store.AgentControls(r.Context(), name)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	sdk, err := s.agentSDK(r.Context(), name)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	problem.Respond(w, r, s.log, http.StatusOK, struct {
		// SDK is the client library the agent last named itself with (null when none did).
		SDK      *guard.AgentSDK   `json:"sdk"`
		Agent    agentOut          `json:"agent"`
		Steps    []stepOut         `json:"steps"`
		Controls []agentControlOut `json:"controls"`
		// The reference's evaluators registered by the agent: guard has none (evaluators are the server's,
		// GET /evaluators).
		Evaluators []struct{} `json:"evaluators"`
	}{sdk, toAgentOut(agent), toStepsOut(steps), toAgentControls(controls), []struct{}{}})
}

func (s *Server) patchAgent(w http.ResponseWriter, r *http.Request) {
	name, err := pathAgent(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	var req patchAgentRequest
	if err := problem.DecodeJSON(r, &req); err != nil {
		s.writeErr(w, r, err)
		return
	}
	var probs []guard.Problem
	for i, ref := range req.RemoveSteps {
		if ref.Type == "" || ref.Name == "" {
			probs = append(probs, guard.Problem{Field: "remove_steps." + strconv.Itoa(i), Code: "required", Message: "type and name must be non-empty strings"})
		}
	}
	if len(probs) > 0 {
		s.writeErr(w, r, problem.Validation("the agent patch is not valid", probs...))
		return
	}
	agent, steps, err := s.store.PatchAgent(r.Context(), name, guard.AgentPatch{
		Description: req.Description, Version: req.Version, Metadata: req.Metadata, RemoveSteps: req.RemoveSteps,
	})
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.cache.invalidate()
	problem.Respond(w, r, s.log, http.StatusOK, agentResponse{Agent: fixAgent(agent), Steps: nonNilSteps(steps)})
}

func (s *Server) agentControls(w http.ResponseWriter, r *http.Request) {
	name, err := pathAgent(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	controls, rev, err := s.store.AgentControls(r.Context(), name)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.noteSDK(r, name) // after the agent is known to exist
	tag := etag(rev)
	w.Header().Set("ETag", tag)
	w.Header().Set("Cache-Control", "no-cache")
	if etagMatches(r.Header.Get("If-None-Match"), tag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	problem.Respond(w, r, s.log, http.StatusOK, struct {
		Controls []agentControlOut `json:"controls"`
	}{toAgentControls(controls)})
}

func (s *Server) linkControl(w http.ResponseWriter, r *http.Request) {
	name, id, err := agentAndControl(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if err := s.store.LinkControl(r.Context(), name, id); err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.cache.invalidate()
	problem.Respond(w, r, s.log, http.StatusOK, successResponse{Success: true})
}

func (s *Server) unlinkControl(w http.ResponseWriter, r *http.Request) {
	name, id, err := agentAndControl(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	removed, err := s.store.UnlinkControl(r.Context(), name, id)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.cache.invalidate()
	problem.Respond(w, r, s.log, http.StatusOK, unlinkResponse{Success: true, Removed: removed, RemovedDirectAssociation: removed})
}

func agentAndControl(r *http.Request) (string, int64, error) {
	name, err := pathAgent(r)
	if err != nil {
		return "", 0, err
	}
	id, err := pathID(r, "control_id")
	return name, id, err
}

func fixAgent(a guard.Agent) guard.Agent {
	if a.Metadata == nil {
		a.Metadata = map[string]any{}
	}
	return a
}

func nonNilSteps(s []guard.StepSchema) []guard.StepSchema {
	if s == nil {
		return []guard.StepSchema{}
	}
	return s
}
