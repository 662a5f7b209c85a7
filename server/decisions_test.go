package server

import (
	"fmt"
	"testing"
)

// TestDecisionsRoundTrip: a decision reads back as written on every read of a control (docs/api.md,
// "Control data"): observe stays observe (and behaves as log), log, warn and allow stay themselves.
func TestDecisionsRoundTrip(t *testing.T) {
	for _, dec := range []string{"observe", "log", "warn", "allow", "deny"} {
		t.Run(dec, func(t *testing.T) {
			ts := newTS(t)
			ts.initAgent("bot")
			id := ts.createControl("c-"+dec, regexData("watch", dec))
			ts.link("bot", id)
			ctl := fmt.Sprintf("/api/v1/controls/%d", id)
			ts.ok(200, "PUT", ctl+"/data", map[string]any{"data": regexData("watch", dec)})
			action := func(data any) string {
				t.Helper()
				d, _ := data.(map[string]any)
				a, _ := d["action"].(map[string]any)
				s, _ := a["decision"].(string)
				return s
			}
			reads := map[string]string{
				"GET control":     action(ts.ok(200, "GET", ctl, nil)["data"]),
				"GET data":        action(ts.ok(200, "GET", ctl+"/data", nil)["data"]),
				"GET version 1":   action(ts.ok(200, "GET", ctl+"/versions/1", nil)["data"]),
				"GET version 2":   action(ts.ok(200, "GET", ctl+"/versions/2", nil)["data"]),
				"agent controls":  action(ts.ok(200, "GET", "/api/v1/agents/bot/controls", nil)["controls"].([]any)[0].(map[string]any)["control"]),
				"GET agent":       action(ts.ok(200, "GET", "/api/v1/agents/bot", nil)["controls"].([]any)[0].(map[string]any)["control"]),
				"initAgent reply": action(ts.initAgent("bot")["controls"].([]any)[0].(map[string]any)["control"]),
				"restore":         action(ts.ok(200, "POST", ctl+"/versions/1/restore", nil)["data"]),
			}
			sum := ts.ok(200, "GET", "/api/v1/controls", nil)["controls"].([]any)[0].(map[string]any)
			reads["summary"], _ = sum["decision"].(string)
			for where, got := range reads {
				if got != dec {
					t.Errorf("%s: decision %q, want %q", where, got, dec)
				}
			}
			// The engine: observe behaves as log (a match that never blocks), reported as written.
			m := ts.eval("bot", "pre", "please watch")
			matches := m["matches"].([]any)
			if len(matches) != 1 {
				t.Fatalf("evaluation: %v", m)
			}
			want := dec
			if got := matches[0].(map[string]any)["action"]; got != want {
				t.Errorf("evaluation reports action %v, want %s", got, want)
			}
			if dec != "deny" && (m["is_safe"] != true || decision(m) != "allow") {
				t.Errorf("a %s match blocked: %v", dec, m)
			}
		})
	}
}
