package server

import (
	"fmt"
	"net/url"
	"testing"
)

// TestOffsetsAndNumbersOutOfRange: issue 23. start_time=2026-11-27T10:00:00+24:00 (no such offset) was
// accepted, and replay's limit 1e400 answered code "type". Every date-time parameter now refuses an
// offset beyond ±14:00, and every number beyond its field's range, with a 422 code "range" naming the
// field.
func TestOffsetsAndNumbersOutOfRange(t *testing.T) {
	ts, id := replayFixture(t)
	ctl := fmt.Sprintf(`"controls":[{"id":%d,"data":{"condition":{"selector":{"path":"input"},"evaluator":{"name":"regex","config":{"pattern":"x"}}},"action":{"decision":"deny"}}}]`, id)
	step := `"agent_name":"bot","stage":"pre","decision":"allow","step":{"type":"llm","name":"chat","input":"x"}`
	for _, tc := range []struct {
		name, method, path, body, field string
	}{
		{"captured start +24:00", "GET", "/api/v1/steps/captured?agent_name=bot&start_time=" + url.QueryEscape("2026-11-27T10:00:00+24:00"), "", "start_time"},
		{"captured end -14:01", "GET", "/api/v1/steps/captured?agent_name=bot&end_time=" + url.QueryEscape("2026-11-27T10:00:00-14:01"), "", "end_time"},
		{"replay start +24:00", "POST", "/api/v1/controls/replay", `{"start_time":"2026-11-27T10:00:00+24:00",` + ctl + `}`, "start_time"},
		{"replay end +15:00", "POST", "/api/v1/controls/replay", `{"end_time":"2026-11-27T10:00:00+15:00",` + ctl + `}`, "end_time"},
		{"replay limit 1e400", "POST", "/api/v1/controls/replay", `{"limit":1e400,` + ctl + `}`, "limit"},
		{"replay limit 20 digits", "POST", "/api/v1/controls/replay", `{"limit":99999999999999999999,` + ctl + `}`, "limit"},
		{"replay limit -1e400", "POST", "/api/v1/controls/replay", `{"limit":-1e400,` + ctl + `}`, "limit"},
		{"replay sample_size 1e400", "POST", "/api/v1/controls/replay", `{"sample_size":1e400,` + ctl + `}`, "sample_size"},
		{"posted step timestamp +24:00", "POST", "/api/v1/steps/captured", `{"steps":[{` + step + `,"timestamp":"2026-11-27T10:00:00+24:00"}]}`, "steps.0.timestamp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.body != "" {
				body = tc.body
			}
			b := ts.expectProblem(422, "VALIDATION_ERROR", tc.method, tc.path, body)
			if len(b.Errors) == 0 || b.Errors[0].Field != tc.field || b.Errors[0].Code != "range" {
				t.Fatalf("problems %+v, want range at %s", b.Errors, tc.field)
			}
		})
	}
	// Offsets within ±14:00 are fine.
	r := ts.do("GET", "/api/v1/steps/captured?agent_name=bot&start_time="+url.QueryEscape("2020-01-01T00:00:00+14:00"), nil)
	if r.Code != 200 {
		t.Fatalf("+14:00: %d %s", r.Code, r.Body)
	}
}
