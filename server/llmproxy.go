package server

import (
	"errors"
	"fmt"
	"net/http"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/llmproxy"
	"github.com/guardrail-control/guard/server/problem"
)

// WithLLMProxy serves the LLM API proxy (package llmproxy, docs/proxy.md) on this server: POST
// /v1/chat/completions, /v1/messages and the gateway guardrail routes, behind a runtime key read from
// X-Guard-Key (Authorization and X-API-Key carry the provider's key on these routes and are passed to the
// upstream untouched). Its steps are evaluated by this server's engine cache exactly as POST /evaluation
// evaluates them (evaluateStep); its Checker and ResolveAgent are set by the server. The agent is the
// X-Guard-Agent header, else the key's agent when the key is limited to exactly one, else cfg.DefaultAgent.
func WithLLMProxy(cfg llmproxy.Config) Option { return func(c *config) { c.llmProxy = &cfg } }

// newLLMProxy builds the proxy of WithLLMProxy (nil without it).
func (s *Server) newLLMProxy() (*llmproxy.Proxy, error) {
	if s.cfg.llmProxy == nil {
		return nil, nil
	}
	cfg := *s.cfg.llmProxy
	def := cfg.DefaultAgent
	cfg.Checker = llmproxy.CheckerFunc(s.proxyCheck)
	cfg.ResolveAgent = func(r *http.Request, named string) (string, error) {
		if named != "" {
			return named, nil
		}
		if e := identityOf(r.Context()); e != nil && e.scope != nil && len(e.scope.patterns) == 0 && len(e.scope.exact) == 1 {
			for n := range e.scope.exact {
				return n, nil
			}
		}
		if def != "" {
			return def, nil
		}
		return "", fmt.Errorf("no agent: name one in the %s header (or use a key limited to one agent)", llmproxy.AgentHeader)
	}
	if cfg.Logger == nil {
		cfg.Logger = s.log.Named("llm_proxy")
	}
	p, err := llmproxy.New(cfg)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// proxyCheck is the proxy's Checker: the scope of the request's key, the session id, then evaluateStep.
func (s *Server) proxyCheck(r *http.Request, agent string, step *guard.Step, stage guard.Stage) (*guard.Result, error) {
	if s.auth.enabled && !KeyAllowsAgent(r.Context(), agent) {
		return nil, &llmproxy.CheckError{Status: http.StatusNotFound, Code: "guard_agent_not_found", Message: "agent not found"}
	}
	if err := guard.CheckSessionID(step); err != nil {
		return nil, &llmproxy.CheckError{Status: http.StatusBadRequest, Code: "guard_bad_session", Message: err.Error()}
	}
	res, err := s.evaluateStep(r, agent, step, stage)
	if err != nil {
		pe := problem.From(err)
		if pe.Status == http.StatusServiceUnavailable {
			return nil, errors.Join(llmproxy.ErrUnavailable, err)
		}
		msg := pe.Detail
		if pe.Code == problem.CodeAgentNotFound {
			msg = "agent " + agent + " not found"
		}
		return nil, &llmproxy.CheckError{Status: pe.Status, Code: "guard_" + pe.Code, Message: msg}
	}
	return res, nil
}

// llmProxyRoutes are the proxy's routes: runtime level, the key read from llmproxy.KeyHeader.
func (s *Server) llmProxyRoutes() []route {
	if s.llmProxy == nil {
		return nil
	}
	var rs []route
	for _, pat := range llmproxy.Routes() {
		method, path, _ := cutSpace(pat)
		rs = append(rs, route{method: method, path: path, level: levelRuntime, keyHeader: llmproxy.KeyHeader, handler: s.llmProxy})
	}
	return rs
}

func cutSpace(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			return s[:i], s[i+1:], true
		}
	}
	return "", s, false
}
