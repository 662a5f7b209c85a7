package server

import (
	"context"
	guard "github.com/guardrail-control/guard"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"
)

// The reference SDKs name themselves on every request (X-Agent-Control-SDK, X-Agent-Control-SDK-Version).
// The server keeps, per agent, the last pair it saw at registration (initAgent) and on the refresh of the
// agent's controls (GET /agents/{name}/controls, which every SDK polls), and shows it in GET
// /agents/{name} (sdk) and on the dashboard's agent page. Evaluations do not record it: the hot path
// stays free of writes.
const (
	sdkHeader        = "X-Agent-Control-SDK"
	sdkVersionHeader = "X-Agent-Control-SDK-Version"
	// sdkRewrite is how often an unchanged pair is written again (to move seen_at): at most once a
	// minute per agent, whatever the refresh rate.
	sdkRewrite = time.Minute
)

// agentSDKStore is the part of the store that keeps the SDKs (store.Store implements it; a store that
// does not simply keeps nothing).
type agentSDKStore = guard.AgentSDKStore

// sdkSeen is what this server last wrote for an agent.
type sdkSeen struct {
	sdk, version string
	at           time.Time
}

// sdkTracker remembers the last writes, so that an unchanged pair is not written on every refresh.
type sdkTracker struct{ last sync.Map } // agent name -> sdkSeen

// noteSDK records the SDK headers of r for agent (a normalised name), if r carries them. A failure is
// logged, never the request's: the headers are informative.
func (s *Server) noteSDK(r *http.Request, agent string) {
	name, version := r.Header.Get(sdkHeader), r.Header.Get(sdkVersionHeader)
	st, ok := s.store.(agentSDKStore)
	if name == "" && version == "" || !ok {
		return
	}
	now := time.Now()
	if v, ok := s.sdks.last.Load(agent); ok {
		if p := v.(sdkSeen); p.sdk == name && p.version == version && now.Sub(p.at) < sdkRewrite {
			return
		}
	}
	if err := st.RecordAgentSDK(r.Context(), agent, name, version, now); err != nil {
		s.log.Warn("could not record the agent's SDK", zap.String("agent", agent), zap.Error(err))
		return
	}
	s.sdks.last.Store(agent, sdkSeen{sdk: name, version: version, at: now})
}

// agentSDK returns the agent's last seen SDK, nil when none was recorded (or the store keeps none).
func (s *Server) agentSDK(ctx context.Context, agent string) (*guard.AgentSDK, error) {
	st, ok := s.store.(agentSDKStore)
	if !ok {
		return nil, nil
	}
	sdk, found, err := st.AgentSDK(ctx, agent)
	if err != nil || !found {
		return nil, err
	}
	return &sdk, nil
}
