package guard

import (
	"encoding/json"
	"fmt"
)

// Limits of what the agent registration API stores. See docs/limits.md.
const (
	// MaxAgentSteps bounds the steps one initAgent registers, and the steps an agent has after a strict
	// registration added to them.
	MaxAgentSteps = 10000
	// MaxFreeJSONBytes bounds the encoded size of each free-form JSON document an agent registration
	// stores: agent_metadata, and a step's input_schema, output_schema and metadata. They nest at most
	// MaxJSONDepth levels, like control data.
	MaxFreeJSONBytes = 64 << 10
)

// CheckFreeJSON checks a free-form JSON document (as encoding/json decodes one) against MaxJSONDepth
// and MaxFreeJSONBytes. It returns the document's compact encoding, or a Problem on field (max_depth,
// too_long, or type when v cannot be encoded) that never repeats the value. A nil map is fine (nil, nil).
func CheckFreeJSON(field string, v map[string]any) ([]byte, *Problem) {
	if v == nil {
		return nil, nil
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return nil, &Problem{Field: field, Code: CodeType, Message: "must be a JSON object"}
	}
	if len(enc) > MaxFreeJSONBytes {
		return nil, &Problem{Field: field, Code: CodeTooLong, Message: fmt.Sprintf("must encode to at most %d bytes of JSON", MaxFreeJSONBytes)}
	}
	if jsonTooDeep(enc, MaxJSONDepth) {
		return nil, &Problem{Field: field, Code: CodeMaxDepth, Message: fmt.Sprintf("must not nest arrays and objects deeper than %d levels", MaxJSONDepth)}
	}
	return enc, nil
}
