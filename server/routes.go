package server

import "net/http"

// route is one endpoint: method, path pattern (ServeMux syntax), access level and handler. The route
// table is the single list the mux, the auth test and the OpenAPI test read.
type route struct {
	method  string
	path    string
	level   level
	handler http.Handler
	// keyHeader is the header the API key is read from ("": APIKeyHeader).
	keyHeader string
}

func (rt route) pattern() string {
	if rt.method == "" { // any method
		return rt.path
	}
	return rt.method + " " + rt.path
}

// reads reports whether the route only reads: a read-only key may call it (GET and HEAD, and the
// events query, which is a POST for its body's sake).
func (rt route) reads() bool {
	return rt.method == http.MethodGet || rt.method == http.MethodHead || rt.path == apiPrefix+"/observability/events/query"
}

// apiPrefix is the prefix of every versioned endpoint.
const apiPrefix = "/api/v1"

func (s *Server) routes() []route {
	f := func(method, path string, l level, h http.HandlerFunc) route {
		return route{method: method, path: path, level: l, handler: h}
	}
	rs := []route{
		f("GET", "/health", levelPublic, s.health),
		f("GET", "/ready", levelPublic, s.ready),
		f("GET", "/openapi.json", levelPublic, s.openAPI),
		f("GET", "/docs", levelPublic, s.docs),

		f("GET", apiPrefix+"/evaluators", levelRuntime, s.listEvaluators),
		// What the request's key may do (access.go): the dashboard enables what the key may use.
		f("GET", apiPrefix+"/access", levelRuntime, s.access),

		f("GET", apiPrefix+"/agents", levelRuntime, s.listAgents),
		f("POST", apiPrefix+"/agents/initAgent", levelRuntime, s.initAgent),
		f("GET", apiPrefix+"/agents/{agent_name}", levelRuntime, s.getAgent),
		f("PATCH", apiPrefix+"/agents/{agent_name}", levelAdmin, s.patchAgent),
		// The reference SDK's init() reads it (agent_config.go): no managed prompt or model here.
		f("GET", apiPrefix+"/agents/{agent_name}/config", levelRuntime, s.getAgentConfig),
		f("GET", apiPrefix+"/agents/{agent_name}/controls", levelRuntime, s.agentControls),
		f("POST", apiPrefix+"/agents/{agent_name}/controls/{control_id}", levelAdmin, s.linkControl),
		f("DELETE", apiPrefix+"/agents/{agent_name}/controls/{control_id}", levelAdmin, s.unlinkControl),
		// The live state of one session (session_read.go): labels, counters, step records; no content.
		f("GET", apiPrefix+"/agents/{agent_name}/sessions/{session_id}", levelRuntime, s.getSession),

		f("PUT", apiPrefix+"/controls", levelAdmin, s.createControl),
		f("GET", apiPrefix+"/controls", levelRuntime, s.listControls),
		f("POST", apiPrefix+"/controls/validate", levelAdmin, s.validateControl),
		f("POST", apiPrefix+"/controls/test", levelAdmin, s.testControl),
		f("POST", apiPrefix+"/controls/try", levelAdmin, s.tryControl),
		// Not a control id (a 422 as one): a 404 that says guard serves no schema there.
		f("GET", apiPrefix+"/controls/schema", levelRuntime, s.controlSchemaNotFound),
		f("GET", apiPrefix+"/controls/{control_id}", levelRuntime, s.getControl),
		f("PATCH", apiPrefix+"/controls/{control_id}", levelAdmin, s.patchControl),
		f("DELETE", apiPrefix+"/controls/{control_id}", levelAdmin, s.deleteControl),
		f("GET", apiPrefix+"/controls/{control_id}/data", levelRuntime, s.getControlData),
		f("PUT", apiPrefix+"/controls/{control_id}/data", levelAdmin, s.putControlData),
		f("GET", apiPrefix+"/controls/{control_id}/versions", levelRuntime, s.listVersions),
		f("GET", apiPrefix+"/controls/{control_id}/versions/{version}", levelRuntime, s.getVersion),
		f("POST", apiPrefix+"/controls/{control_id}/versions/{version}/restore", levelAdmin, s.restoreVersion),

		// Control templates (templates.go): read like the evaluators; a render writes nothing but is a
		// control-authoring tool like POST /controls/validate, so it takes the admin key.
		f("GET", apiPrefix+"/control-templates", levelRuntime, s.listTemplates),
		f("GET", apiPrefix+"/control-templates/{template_name}", levelRuntime, s.getTemplate),
		f("POST", apiPrefix+"/control-templates/{template_name}/render", levelAdmin, s.renderTemplate),

		f("POST", apiPrefix+"/evaluation", levelRuntime, s.evaluate),

		// API keys made at runtime (runtime_keys.go): an admin key not limited to agents.
		f("GET", apiPrefix+"/keys", levelAdmin, s.listKeys),
		f("POST", apiPrefix+"/keys", levelAdmin, s.createKey),
		f("GET", apiPrefix+"/keys/{key_name}", levelAdmin, s.getKey),
		f("POST", apiPrefix+"/keys/{key_name}/rotate", levelAdmin, s.rotateKey),
		f("DELETE", apiPrefix+"/keys/{key_name}", levelAdmin, s.revokeKey),

		// Step capture and replay (issue 14; capture.go, replay.go).
		f("POST", apiPrefix+"/steps/captured", levelRuntime, s.postCapturedSteps),
		// Reading them back shows payloads (redacted, but real traffic): admin, like a replay's samples.
		f("GET", apiPrefix+"/steps/captured", levelAdmin, s.listCapturedSteps),
		f("POST", apiPrefix+"/controls/replay", levelAdmin, s.replayControls),
		f("GET", apiPrefix+"/controls/replay/jobs/{job_id}", levelAdmin, s.getReplayJob),

		// Approvals (issue 25, approvals.go): reading shows the redacted step and its grant to the agent
		// that waits for it (runtime); deciding takes the admin key.
		f("GET", apiPrefix+"/approvals", levelRuntime, s.listApprovals),
		f("GET", apiPrefix+"/approvals/{approval_id}", levelRuntime, s.getApproval),
		f("POST", apiPrefix+"/approvals/{approval_id}", levelApprove, s.decideApproval),

		// The reference implementation's policies: absent here, with a 404 that says why (any method).
		// Public, like any unknown route: the answer reveals nothing.
		f("", apiPrefix+"/policies", levelPublic, s.policiesGone),
		f("", apiPrefix+"/policies/", levelPublic, s.policiesGone),
		f("", apiPrefix+"/agents/{agent_name}/policies", levelPublic, s.agentPoliciesGone),
		f("", apiPrefix+"/agents/{agent_name}/policies/", levelPublic, s.agentPoliciesGone),
		f("", apiPrefix+"/agents/{agent_name}/policy", levelPublic, s.agentPoliciesGone),
		f("", apiPrefix+"/agents/{agent_name}/policy/", levelPublic, s.agentPoliciesGone),
		f("", apiPrefix+"/control-bindings", levelPublic, s.controlBindingsGone),
		f("", apiPrefix+"/control-bindings/", levelPublic, s.controlBindingsGone),
	}
	rs = append(rs, s.auditRoutes()...)
	rs = append(rs, s.obsRoutes()...)
	rs = append(rs, s.pprofRoutes()...)
	rs = append(rs, s.llmProxyRoutes()...)
	if s.cfg.ui != nil {
		rs = append(rs,
			route{method: "GET", path: "/ui/", level: levelPublic, handler: s.cfg.ui},
			f("GET", "/{$}", levelPublic, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "/ui/", http.StatusFound)
			}),
		)
	}
	return rs
}
