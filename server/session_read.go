package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
)

// GET /agents/{agent_name}/sessions/{session_id}: the live state of one session (docs/api.md, "Sessions"),
// what the dashboard's session view shows beside the session's events: the labels it acquired with the
// step that added each, its counters and sums, and its last step records. Never step content (the state
// holds none). A key scoped to other agents gets the 404 of a missing agent.

// CodeSessionNotFound answers a session with no live state: it never ran a control that keeps session
// state, or it was idle for longer than the store's TTL.
const CodeSessionNotFound = "SESSION_NOT_FOUND"

// CodeSessionStoreUnavailable answers a session read the session store (Redis) did not answer.
const CodeSessionStoreUnavailable = "SESSION_STORE_UNAVAILABLE"

// freshSessionReader is implemented by stores whose Load may answer from a replica's cache (the Redis
// store): ReadSession reads the stored state itself, so that the view agrees whichever replica serves it.
type freshSessionReader interface {
	ReadSession(ctx context.Context, agent, session string) (sess, ag *guard.SessionState, err error)
}

// sessionOut is the answer of the route.
type sessionOut struct {
	AgentName string `json:"agent_name"`
	SessionID string `json:"session_id"`
	// Version counts the session's updates; StepsSeen the steps recorded at the pre stage.
	Version   int64               `json:"version"`
	StepsSeen int64               `json:"steps_seen"`
	UpdatedAt time.Time           `json:"updated_at"`
	Labels    []guard.LabelOrigin `json:"labels"`
	Counters  []counterOut        `json:"counters"`
	// Steps are the last guard.MaxSessionSteps step records, oldest first.
	Steps []stepRecordOut `json:"steps"`
	// AgentCounters are the agent-wide counters (agent.* selectors), over every session of the agent.
	AgentCounters []counterOut `json:"agent_counters"`
}

// counterOut is one counter or sum of a state, as the selector that reads it names it.
type counterOut struct {
	Kind   string  `json:"kind"`   // count or sum
	Name   string  `json:"name"`   // the step name or label counted, or the field summed
	Window string  `json:"window"` // "" for the whole session, else a duration (1m0s)
	Value  float64 `json:"value"`  // the value now (0 once its window has passed)
	// WindowStart is when the current window began (omitted without a window).
	WindowStart *time.Time `json:"window_start,omitempty"`
	// Shadow marks the would-be counter of a shadow control that no enforced control keeps (omitted
	// otherwise): what the counter would be were the shadow controls enforced.
	Shadow bool `json:"shadow,omitempty"`
}

type stepRecordOut struct {
	Seq      int64          `json:"seq"`
	Type     string         `json:"type"`
	Name     string         `json:"name"`
	Decision guard.Decision `json:"decision"`
	At       time.Time      `json:"at"`
}

func (s *Server) getSession(w http.ResponseWriter, r *http.Request) {
	agent, err := pathAgent(r)
	if err == nil {
		err = checkAgent(r.Context(), agent, "agent_name")
	}
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	id := r.PathValue("session_id")
	if err := guard.CheckSessionID(&guard.Step{Context: map[string]any{"session_id": id}}); err != nil || id == "" {
		msg := "must be at most " + strconv.Itoa(guard.MaxSessionIDBytes) + " bytes"
		if id == "" {
			msg = "must not be empty"
		}
		s.writeErr(w, r, invalidParam("session_id", "invalid", msg))
		return
	}
	if _, err := s.store.AgentRevision(r.Context(), agent); err != nil {
		s.writeErr(w, r, err)
		return
	}
	now := time.Now()
	sess, ag, err := s.readSession(r.Context(), agent, id, now)
	if err != nil {
		s.log.Warn("reading a session's state failed", zap.String("agent", agent), zap.Error(err))
		s.writeErr(w, r, problem.New(http.StatusServiceUnavailable, CodeSessionStoreUnavailable, "the session store did not answer"))
		return
	}
	if sess == nil {
		s.writeErr(w, r, problem.New(http.StatusNotFound, CodeSessionNotFound,
			"this session has no live state: it ran no control that keeps session state, or it was idle for longer than the session TTL"))
		return
	}
	problem.Respond(w, r, s.log, http.StatusOK, toSessionOut(agent, id, sess, ag, now))
}

// readSession reads the stored states of a session and of its agent, past any replica cache.
func (s *Server) readSession(ctx context.Context, agent, id string, now time.Time) (sess, ag *guard.SessionState, err error) {
	st := s.cache.sessions
	for {
		switch x := st.(type) {
		case countingSerialStore:
			st = x.SessionStore
			continue
		case countingStore:
			st = x.SessionStore
			continue
		}
		break
	}
	if st == nil {
		return nil, nil, errors.New("no session store")
	}
	if fr, ok := st.(freshSessionReader); ok {
		return fr.ReadSession(ctx, agent, id)
	}
	return st.Load(ctx, agent, id, true, now)
}

func toSessionOut(agent, id string, sess, ag *guard.SessionState, now time.Time) sessionOut {
	out := sessionOut{AgentName: agent, SessionID: id, Version: sess.Version, StepsSeen: sess.Seq,
		UpdatedAt: time.UnixMilli(sess.Touched).UTC(), Labels: sess.Labels, Counters: countersOut(sess.Counters, now),
		Steps: make([]stepRecordOut, 0, len(sess.Steps)), AgentCounters: []counterOut{}}
	if out.Labels == nil {
		out.Labels = []guard.LabelOrigin{}
	}
	for _, r := range sess.Steps {
		out.Steps = append(out.Steps, stepRecordOut{Seq: r.Seq, Type: r.Type, Name: r.Name, Decision: r.Decision, At: time.UnixMilli(r.At).UTC()})
	}
	if ag != nil {
		out.AgentCounters = countersOut(ag.Counters, now)
	}
	return out
}

// countersOut names the counters of a state. A counter's key is the engine's (session_selector.go,
// counterKey): "c" (count) or "s" (sum), the window in milliseconds, ":", the name, after "w" for a
// shadow control's would-be counter; a key of another form is shown as its raw text (TestSessionReadCounters ties the two together).
func countersOut(cs []guard.Counter, now time.Time) []counterOut {
	out := make([]counterOut, 0, len(cs))
	for _, c := range cs {
		co := counterOut{Kind: "counter", Name: c.Key, Value: c.Value}
		key := c.Key
		if guard.IsShadowCounter(key) {
			co.Shadow, key = true, key[1:]
		}
		head, name, ok := strings.Cut(key, ":")
		if ms, err := strconv.ParseInt(head[min(1, len(head)):], 10, 64); ok && err == nil && ms >= 0 && (head[0] == 'c' || head[0] == 's') {
			co.Kind, co.Name = "count", name
			if head[0] == 's' {
				co.Kind = "sum"
			}
			if ms > 0 {
				window := time.Duration(ms) * time.Millisecond
				co.Window = window.String()
				start := time.UnixMilli(c.Start).UTC()
				co.WindowStart = &start
				if now.Sub(start) >= window {
					co.Value = 0 // the window has passed: the next step starts a new one
				}
			}
		}
		out = append(out, co)
	}
	return out
}
