package guard

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// redactedMismatch compares the payload a test expects the agent to receive (expect.redacted) with the
// stage's payload of step after redaction; "" when they are the same JSON value. The message shows the
// payload received, which holds no more than the test's own step.
func redactedMismatch(want any, step *Step, stage Stage) string {
	got := step.Input
	if stage == StagePost {
		got = step.Output
	}
	w, errW := normalizedJSON(want)
	g, errG := normalizedJSON(got)
	if errW != nil || errG != nil || !reflect.DeepEqual(w, g) {
		b, _ := json.Marshal(got)
		return fmt.Sprintf("redacted: expected another payload, got %s", b)
	}
	return ""
}

// normalizedJSON is v as encoding/json decodes its JSON (numbers float64, objects map[string]any), so that a
// value written in YAML or Go compares with one decoded from the wire.
func normalizedJSON(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(b, &out)
	return out, err
}
