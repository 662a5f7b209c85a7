package client

// ShortShadowEvaluations returns how many shadow passes (the shadow controls of one stage, evaluated
// in-process) the stage's evaluation deadline left short: skipped because the enforced controls had
// spent it, or cut while running (their controls are then recorded as errors naming the deadline).
// Shadow controls never get a deadline of their own, so they never delay a protected call past
// Config.EvaluationTimeout; a count that grows says a shadow control rarely gets its chance.
func (a *Agent) ShortShadowEvaluations() int64 { return a.shadowShort.Load() }
