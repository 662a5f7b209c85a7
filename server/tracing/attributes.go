package tracing

// Names of the evaluation span, of its per-control span events, and of their attributes. The span is
// named EvaluationSpan (low cardinality: agent and step are attributes); each evaluated control adds one
// ControlEvent at the end of the evaluation. Controls are span events rather than child spans because
// the engine measures each control's duration but not its start (external evaluators run concurrently):
// a child span would have to invent its start time.
const (
	EvaluationSpan = "guard.evaluation"
	ControlEvent   = "guard.control"

	AttrAgentName      = "guard.agent.name"
	AttrStage          = "guard.stage"
	AttrStepType       = "guard.step.type"
	AttrStepName       = "guard.step.name"
	AttrDecision       = "guard.decision"
	AttrIsSafe         = "guard.is_safe"
	AttrMatchCount     = "guard.matches"
	AttrErrorCount     = "guard.errors"
	AttrNonMatchCount  = "guard.non_matches"
	AttrErrorCode      = "guard.error_code"
	AttrControlID      = "guard.control.id"
	AttrControlName    = "guard.control.name"
	AttrControlAction  = "guard.control.action"
	AttrControlMatched = "guard.control.matched"
	AttrConfidence     = "guard.control.confidence"
	AttrEvaluator      = "guard.control.evaluator"
	AttrDurationMS     = "guard.control.duration_ms"
	AttrControlError   = "guard.control.error"
	AttrExecutionID    = "guard.control.execution_id"
)
