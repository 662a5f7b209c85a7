package guard

// Err returns the blocking outcome of r as an error: *ControlViolationError for deny, *ControlSteerError
// for steer, nil otherwise. The winning control is found with Evaluate's rule (the first entry of Matches
// with the decision's action, else the first such entry of Errors that counts as matched); Message is
// r.Reason. For a result of Engine.Evaluate it returns what Engine.Check returns for the same step.
func (r *Result) Err() error {
	if r == nil || (r.Decision != DecisionDeny && r.Decision != DecisionSteer) {
		return nil
	}
	w := r.winner(r.Decision)
	if r.Decision == DecisionSteer {
		e := &ControlSteerError{Message: r.Reason}
		if r.SteeringContext != nil {
			e.SteeringContext = *r.SteeringContext
		}
		if w != nil {
			e.ControlID, e.ControlName, e.Metadata = w.ControlID, w.ControlName, w.Metadata
			if w.SteeringContext != nil {
				e.SteeringContext = *w.SteeringContext
			}
		}
		return e
	}
	e := &ControlViolationError{Message: r.Reason}
	if w != nil {
		e.ControlID, e.ControlName, e.Metadata = w.ControlID, w.ControlName, w.Metadata
	}
	return e
}

// winner finds the control that decided d.
func (r *Result) winner(d Decision) *ControlResult {
	for i := range r.Matches {
		if r.Matches[i].Action == d && r.Matches[i].Result.Matched {
			return &r.Matches[i]
		}
	}
	for i := range r.Errors {
		if r.Errors[i].Action == d && r.Errors[i].Result.Matched {
			return &r.Errors[i]
		}
	}
	return nil
}
