package ui_test

import (
	"fmt"
	"strings"
	"testing"
)

// seedSession gives the agent "bot" the rule-of-two and tool-loop controls and runs session conv-1 (fetch_page,
// read_file, http_post: the third denied on the history of the first two) and session conv-2 (one step).
func seedSession(a *app) {
	a.t.Helper()
	a.call("POST", "/api/v1/agents/initAgent", map[string]any{"agent": map[string]any{"agent_name": "bot"}, "steps": []any{}}, 200, nil)
	var rendered struct {
		Data map[string]any `json:"control_data"`
	}
	a.call("POST", "/api/v1/control-templates/rule-of-two/render", map[string]any{"parameters": map[string]any{
		"untrusted_steps": []string{"fetch_page"}, "sensitive_steps": []string{"read_file"}, "egress_steps": []string{"http_post"}}}, 200, &rendered)
	id := a.createControl("rule-of-two", rendered.Data)
	a.call("POST", fmt.Sprintf("/api/v1/agents/bot/controls/%d", id), nil, 200, nil)
	a.call("POST", "/api/v1/control-templates/tool-loop/render", map[string]any{"parameters": map[string]any{"max_calls": 20, "window": "60s"}}, 200, &rendered)
	id = a.createControl("tool-loop", rendered.Data)
	a.call("POST", fmt.Sprintf("/api/v1/agents/bot/controls/%d", id), nil, 200, nil)
	step := func(tool, session, want string) {
		var res struct {
			Decision string `json:"decision"`
		}
		a.call("POST", "/api/v1/evaluation", map[string]any{"agent_name": "bot", "stage": "pre",
			"step": map[string]any{"type": "tool", "name": tool, "context": map[string]any{"session_id": session}}}, 200, &res)
		if res.Decision != want {
			a.t.Fatalf("%s in %s: %s, want %s", tool, session, res.Decision, want)
		}
	}
	step("fetch_page", "conv-1", "allow")
	step("read_file", "conv-1", "allow")
	step("fetch_page", "conv-2", "allow")
	step("http_post", "conv-1", "deny")
	a.flushEvents()
}

// sessionShown is what the session view shows, read from the page: the steps in order (seq:name:decision,
// with * on the highlighted denied row and ^ on the rows it cites), the labels and the counters' names.
const sessionShown = `(() => {
	const rows = [...document.querySelectorAll('#session-steps tbody tr')].map(tr =>
		tr.dataset.seq + ':' + tr.dataset.step + ':' + tr.dataset.decision + (tr.classList.contains('session-denied') ? '*' : '') + (tr.classList.contains('session-cause') ? '^' : ''));
	const labels = [...document.querySelectorAll('#session-labels tbody tr')].map(tr => tr.dataset.label + '@' + tr.children[1].textContent);
	const counters = [...document.querySelectorAll('#session-counters tbody tr')].map(tr => [...tr.children].slice(0, 4).map(td => td.textContent).join(' ')).sort();
	const denied = document.querySelector('#session-steps tr.session-denied');
	const bg = denied ? getComputedStyle(denied.children[0]).backgroundColor + '|' + getComputedStyle(denied).backgroundColor : '';
	const plain = document.querySelector('#session-steps tbody tr:not(.session-denied)');
	const plainBg = plain ? getComputedStyle(plain.children[0]).backgroundColor + '|' + getComputedStyle(plain).backgroundColor : '';
	return { rows: rows.join(' '), labels: labels.join(' '), counters: counters.join('; '), why: denied ? denied.querySelector('.session-why').textContent : '',
		highlighted: !!denied && bg !== plainBg, markVisible: !!denied && denied.querySelector('.deny-mark').getClientRects().length > 0,
		summary: (document.getElementById('session-deny-summary') || {}).textContent || '' };
})()`

type sessionPage struct {
	Rows, Labels, Counters, Why, Summary string
	Highlighted, MarkVisible             bool
}

// TestSessionView (issue 24): the session view, reached from an event and from the agent page, shows the
// steps of one session in order with their decision, the labels acquired with the step that added each,
// and the step a control denied on the session's history highlighted with the steps it cites, at desktop
// and phone widths.
func TestSessionView(t *testing.T) {
	for _, width := range []int{1280, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			a := startApp(t, appOptions{width: width, height: 800})
			seedSession(a)

			// From an event: the deny event's row links to its session.
			a.open("#/events?agent=bot&action=deny")
			a.waitJS("the deny event's session link", `!!document.querySelector('#events-results a.session-link')`)
			if txt := a.text("#events-results a.session-link"); txt != "session step 3" {
				t.Errorf("link text %q", txt)
			}
			a.click("#events-results a.session-link")
			a.waitRendered("#/agents/bot/sessions/conv-1")
			check := func(from string) {
				t.Helper()
				p := eval[sessionPage](a, "the session view", sessionShown)
				if p.Rows != "1:fetch_page:allow^ 2:read_file:allow^ 3:http_post:deny*" {
					t.Errorf("%s: steps %q", from, p.Rows)
				}
				// The denied step adds no label: effects apply to steps let through.
				if p.Labels != "untrusted@step 1 (fetch_page) sensitive@step 2 (read_file)" {
					t.Errorf("%s: labels %q", from, p.Labels)
				}
				// The tool loop counts each tool of the session's steps let through (not the denied one).
				if p.Counters != "count fetch_page 1m0s 1; count read_file 1m0s 1" {
					t.Errorf("%s: counters %q", from, p.Counters)
				}
				if !p.Highlighted || !p.MarkVisible {
					t.Errorf("%s: the denied step is not highlighted (%+v)", from, p)
				}
				for _, w := range []string{"step 1 (fetch_page) added label untrusted", "step 2 (read_file) added label sensitive"} {
					if !strings.Contains(p.Why, w) || !strings.Contains(p.Summary, w) {
						t.Errorf("%s: why %q / summary %q lacks %q", from, p.Why, p.Summary, w)
					}
				}
				if probs := eval[[]string](a, "a11y checks", a11yProblems); len(probs) > 0 {
					t.Errorf("%s at %d px:\n  %s", from, width, strings.Join(probs, "\n  "))
				}
			}
			check("from an event")
			if got := a.text("#session-steps-seen"); got != "3" {
				t.Errorf("steps seen %q", got)
			}

			// From the agent page: its recent sessions, the newest first.
			a.goTo("#/agents/bot")
			a.waitJS("the agent's sessions", `document.getElementById('agent-sessions').getAttribute('aria-busy') === 'false'`)
			got := eval[string](a, "sessions listed", `[...document.querySelectorAll('#agent-sessions tbody tr')].map(tr => tr.dataset.session + ':' + tr.children[2].textContent + ':' + (tr.children[3].textContent || '-')).join(' ')`)
			if got != "conv-1:3:deny conv-2:1:-" {
				t.Errorf("agent page sessions %q", got)
			}
			a.click(`#agent-sessions tr[data-session="conv-1"] a`)
			a.waitRendered("#/agents/bot/sessions/conv-1")
			check("from the agent page")

			// The events page filters by session id (its "all events of this session" link).
			a.goTo("#/agents/bot/sessions/conv-2")
			a.click("#session-events")
			a.waitJS("the events of conv-2", `(() => { const r = document.getElementById('events-results'); return r && r.getAttribute('aria-busy') === 'false' && r.querySelectorAll('tbody tr').length > 0; })()`)
			links := eval[[]string](a, "session links", `[...document.querySelectorAll('#events-results tbody tr')].map(tr => (tr.querySelector('a.session-link') || {}).getAttribute ? tr.querySelector('a.session-link').getAttribute('href') : 'none')`)
			if len(links) != 2 || links[0] != "#/agents/bot/sessions/conv-2" || links[1] != links[0] {
				t.Errorf("events of conv-2: %v", links)
			}
			if v := eval[string](a, "session filter", `document.getElementById('ev-session').value`); v != "conv-2" {
				t.Errorf("session filter %q", v)
			}

			// A session opened by id with no state and no events says so, without an error.
			a.goTo("#/agents/bot")
			a.setValue("#open-session-id", "nothing-here")
			a.click("#open-session")
			a.waitRendered("#/agents/bot/sessions/nothing-here")
			if st := a.text("#session-state"); !strings.Contains(st, "no live state") {
				t.Errorf("state of an unknown session: %q", st)
			}
			a.noPageErrors()
		})
	}
}
