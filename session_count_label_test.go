package guard

import (
	"context"
	"testing"
	"time"
)

// TestSessionCountByLabelCountsEveryStep (issue 32, item 5): session.count.<label> counts every step
// carrying the label, not only the step that first gave the label to the session; counting by step name
// stays as it was. The labels come from label_steps or from the agent's step schemas.
func TestSessionCountByLabelCountsEveryStep(t *testing.T) {
	egressLimit := func(selector, labelSteps string) string {
		return `{"enabled": true, "scope": {"stages": ["pre"]},
		  "condition": {"selector": {"path": "` + selector + `"}, "evaluator": {"name": "threshold", "config": {"gt": 2}}},
		  "action": {"decision": "deny"` + labelSteps + `}}`
	}
	withLabelSteps := `, "session": {"label_steps": [{"label": "egress", "steps": ["http_post", "send_sms"]}]}`
	flow := []string{"http_post", "search", "send_sms", "http_post", "http_post"}
	cases := []struct {
		name     string
		control  string
		opts     []Option
		selector string
		want     []Decision
		count    float64 // the stored counter after the flow (denied steps do not count)
	}{
		{name: "label_steps", control: egressLimit("session.count.egress", withLabelSteps), selector: "session.count.egress",
			want: []Decision{DecisionAllow, DecisionAllow, DecisionAllow, DecisionDeny, DecisionDeny}, count: 2},
		{name: "step schema labels", control: egressLimit("session.count.egress", ""),
			opts:     []Option{WithStepLabels(map[string][]string{"http_post": {"egress"}, "send_sms": {"egress"}})},
			selector: "session.count.egress",
			want:     []Decision{DecisionAllow, DecisionAllow, DecisionAllow, DecisionDeny, DecisionDeny}, count: 2},
		{name: "agent-wide by label", control: egressLimit("agent.count.egress", withLabelSteps), selector: "agent.count.egress",
			want: []Decision{DecisionAllow, DecisionAllow, DecisionAllow, DecisionDeny, DecisionDeny}, count: 2},
		{name: "by step name", control: egressLimit("session.count.http_post", ""), selector: "session.count.http_post",
			want: []Decision{DecisionAllow, DecisionAllow, DecisionAllow, DecisionAllow, DecisionDeny}, count: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := append([]Option{WithAgentName("bot")}, tc.opts...)
			e := sessEngine(t, []Control{sessCtl(t, 1, "egress-limit", tc.control)}, opts...)
			for i, name := range flow {
				mustDecide(t, e, tool(name, "s1", nil), StagePre, tc.want[i])
			}
			sess, ag, err := e.cfg.sess.store.Load(context.Background(), "bot", "s1", true, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			st := sess
			if tc.selector[0] == 'a' {
				st = ag
			}
			var total float64
			for _, c := range st.Counters {
				total += c.Value
			}
			if total != tc.count {
				t.Fatalf("counters %+v, want a total of %g", st.Counters, tc.count)
			}
		})
	}
}
