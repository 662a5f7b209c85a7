package observability

import (
	"fmt"
	"strconv"

	guard "github.com/guardrail-control/guard"
)

// MaxQueryList bounds each list filter of POST /observability/events/query (control_ids, actions,
// check_stages, step_types): 422 naming the list past it.
const MaxQueryList = guard.MaxEventQueryList

// checkLimits bounds the lists of a query and the strings they and trace_id hold, before anything else
// looks at them.
func (req *QueryRequest) checkLimits() []guard.Problem {
	var ps []guard.Problem
	for _, l := range []struct {
		field string
		n     int
	}{
		{"control_ids", len(req.ControlIDs)},
		{"actions", len(req.Actions)},
		{"check_stages", len(req.CheckStages)},
		{"step_types", len(req.StepTypes)},
	} {
		if l.n > MaxQueryList {
			ps = append(ps, guard.Problem{Field: l.field, Code: "max_items", Message: fmt.Sprintf("must hold at most %d values", MaxQueryList)})
		}
	}
	if len(req.StepTypes) <= MaxQueryList {
		for i, s := range req.StepTypes {
			if len(s) > maxShortField {
				ps = append(ps, guard.Problem{Field: "step_types." + strconv.Itoa(i), Code: "max_length",
					Message: fmt.Sprintf("must be at most %d bytes long", maxShortField)})
			}
		}
	}
	if len(req.TraceID) > maxShortField {
		ps = append(ps, guard.Problem{Field: "trace_id", Code: "max_length", Message: fmt.Sprintf("must be at most %d bytes long", maxShortField)})
	}
	if len(req.SessionID) > guard.MaxSessionIDBytes {
		ps = append(ps, guard.Problem{Field: "session_id", Code: "max_length", Message: fmt.Sprintf("must be at most %d bytes long", guard.MaxSessionIDBytes)})
	}
	return ps
}
