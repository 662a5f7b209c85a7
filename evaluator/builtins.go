package evaluator

func init() { RegisterBuiltins(Default) }

// RegisterBuiltins registers the built-in evaluators (regex, list and threshold) into r, so that a custom registry
// can have them too. Like Register, it panics if one of their names is already taken in r.
func RegisterBuiltins(r *Registry) {
	r.Register(RegexFactory())
	r.Register(ListFactory())
	r.Register(ThresholdFactory())
}
