package guard

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/guardrail-control/guard/evaluator"
	"github.com/guardrail-control/guard/internal/jsonstr"
)

// sessionShared is the session configuration of an engine, shared by its shadow engine (a pointer in
// engineConfig, which is copied).
type sessionShared struct {
	once       sync.Once
	store      SessionStore
	agent      string
	stepLabels *StepLabels // the labels the agent's step schemas declare, by step name
	now        func() time.Time
	errors     atomic.Int64 // store failures (Load or Commit)
}

// WithSessionStore makes the engine keep session state in st instead of its own MemorySessionStore: the
// server passes one store to every agent's engine (and the Redis store when GUARD_SESSION_STORE is set).
func WithSessionStore(st SessionStore) Option {
	return func(c *engineConfig) { c.sessions().store = st }
}

// WithAgentName names the agent whose steps the engine evaluates: session and agent state are kept per
// agent name, so that engines of different agents sharing a store never read each other's state.
func WithAgentName(name string) Option {
	return func(c *engineConfig) { c.sessions().agent = name }
}

// WithStepLabels gives the labels the agent's step schemas declare, by step name: a step let through at
// the pre stage adds them to its session, and its own evaluation sees them in session.labels.
func WithStepLabels(labels map[string][]string) Option {
	return func(c *engineConfig) {
		sl := &StepLabels{}
		sl.Set(labels)
		c.sessions().stepLabels = sl
	}
}

// withSessionClock replaces the clock of session windows (tests).
func withSessionClock(now func() time.Time) Option {
	return func(c *engineConfig) { c.sessions().now = now }
}

// evaluationTimeKey is the context key of WithEvaluationTime.
type evaluationTimeKey struct{}

// WithEvaluationTime returns a context under which evaluations measure session windows and idle expiry
// at t instead of the engine's clock: a replay of captured steps evaluates each one at the time it was
// captured, so that "21 calls within a minute" means what it meant on the live traffic.
func WithEvaluationTime(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, evaluationTimeKey{}, t)
}

// zeroEngineSessions is the session configuration of zero Engines (not made by New): they share one
// in-memory store.
var zeroEngineSessions = &sessionShared{}

// sessShared returns the engine's session configuration (never modifies the engine: safe concurrently).
func (e *Engine) sessShared() *sessionShared {
	if e.cfg.sess != nil {
		return e.cfg.sess
	}
	return zeroEngineSessions
}

// sessions returns the session configuration, creating it.
func (c *engineConfig) sessions() *sessionShared {
	if c.sess == nil {
		c.sess = &sessionShared{}
	}
	return c.sess
}

// SessionStoreErrors returns how many evaluations found the session store failing (the controls that
// read session state then failed by their on_error).
func (e *Engine) SessionStoreErrors() int64 {
	return e.sessShared().errors.Load()
}

// UsesSessions reports whether the engine's controls read or write session or agent state.
func (e *Engine) UsesSessions() bool { return e.load().session != nil }

// sessionStore returns the store, creating the default in-memory one on first use.
func (s *sessionShared) sessionStore() SessionStore {
	s.once.Do(func() {
		if s.store == nil {
			s.store = NewMemorySessionStore(0, 0)
		}
		if s.now == nil {
			s.now = sessionNow
		}
	})
	return s.store
}

// sessionPlan is what a snapshot's controls need of session state; nil when they need nothing, so that
// the evaluation of the others costs nothing more.
type sessionPlan struct {
	readsSession bool
	readsAgent   bool
	counters     []*sessionSel // session counters and sums, distinct
	agentCtrs    []*sessionSel
	agentChecks  []agentCheck             // what the leaves reading each agentCtrs entry make of its values
	effects      []int32                  // controls with action.session.add_labels
	ownShadow    bool                     // a shadow plan with would-be counters of its own (session_shadow.go)
	labelSteps   map[string][]LabelOrigin // step name -> labels given by label_steps
}

// buildSessionPlan finds what the controls of s read and write of session state.
func buildSessionPlan(s *snapshot) *sessionPlan {
	p := &sessionPlan{}
	used := false
	seen := map[string]int{}
	var agentPaths [][]int32 // the snapshot paths of each agentCtrs entry
	for i := range s.paths {
		sel := s.paths[i].sel.sess
		if sel == nil {
			continue
		}
		used = true
		if sel.agent {
			p.readsAgent = true
		} else {
			p.readsSession = true
		}
		switch sel.kind {
		case sessCount, sessCountNamed, sessSum:
			k := fmt.Sprintf("%t|%d|%d|%s", sel.agent, sel.kind, sel.window.Milliseconds(), sel.name)
			if j, ok := seen[k]; ok {
				if sel.agent {
					agentPaths[j] = append(agentPaths[j], int32(i))
				}
				continue
			}
			if sel.agent {
				seen[k] = len(p.agentCtrs)
				p.agentCtrs = append(p.agentCtrs, sel)
				agentPaths = append(agentPaths, []int32{int32(i)})
			} else {
				seen[k] = len(p.counters)
				p.counters = append(p.counters, sel)
			}
		}
	}
	p.buildAgentChecks(s, agentPaths)
	for i := range s.controls {
		eff := s.controls[i].effect
		if eff == nil {
			continue
		}
		used = true
		if len(eff.AddLabels) > 0 {
			p.effects = append(p.effects, int32(i))
		}
		for _, ls := range eff.LabelSteps {
			if p.labelSteps == nil {
				p.labelSteps = map[string][]LabelOrigin{}
			}
			for _, name := range ls.Steps {
				p.labelSteps[name] = append(p.labelSteps[name], LabelOrigin{Label: ls.Label, StepName: name, By: labelsBy("label_steps of control", s.controls[i].name)})
			}
		}
	}
	if !used {
		return nil
	}
	return p
}

// sessionView is the session state one evaluation sees: the stored states plus what the step itself
// contributes (its own labels, its count, its value of each summed field).
type sessionView struct {
	id    string
	sess  *SessionState
	agent *SessionState
	now   int64
	stage Stage
	step  *Step
	plan  *sessionPlan
	err   error         // the store failed: session leaves are evaluator errors
	own   []LabelOrigin // labels the step carries, not yet in the session
	// The labels the step carries (pre stage), whether or not the session has them already:
	// session.count.<label> counts every step carrying the label.
	schemaLabels []string      // the step schema's
	stepLabels   []LabelOrigin // label_steps'
	adds         []counterAdd  // contributions to the session's counters (pre stage)
	agAdds       []counterAdd  // contributions to the agent's counters (pre stage)
	// labels is session.labels, built on first use (labelsOK)
	labels   evaluator.Data
	labelsOK bool
	keys     []selKey // counter keys of the current-name counts (counterKeyFor)
	keyBuf   [2]selKey
	// The commit of the evaluation and small buffers, in the view's allocation (one per evaluation).
	c        SessionCommit
	rec      StepRecord
	addBuf   [2]counterAdd
	agAddBuf [2]counterAdd
	cAddBuf  [2]CounterAdd
	chkBuf   [2]CounterCheck
	ownBuf   [2]LabelOrigin
	lblBuf   [2]LabelOrigin // c.Labels
	effects  []*cControl    // sessOutcome.effects of Check
	effBuf   [2]*cControl
	// The session's turn in the in-memory store, held until the view is released.
	mem     *MemorySessionStore
	turnKey memKey
	h       uint64
	turn    *memTurn
}

// views reuses sessionViews: a view is most of what an evaluation with session state allocates.
var views = sync.Pool{New: func() any { return new(sessionView) }}

// getView returns an empty view.
func getView() *sessionView {
	v := views.Get().(*sessionView)
	v.keys = v.keyBuf[:0]
	v.adds = v.addBuf[:0]
	v.own = v.ownBuf[:0]
	v.effects = v.effBuf[:0]
	v.agAdds = v.agAddBuf[:0]
	return v
}

// release returns v to the pool: nothing of the evaluation may use it afterwards (the store copied
// what it keeps of the commit; results hold copies of its strings).
// holdTurn hands the session's turn (nil when none) to v, which releases it with the view.
func (v *sessionView) holdTurn(mem *MemorySessionStore, k memKey, h uint64, turn **memTurn) {
	if *turn != nil {
		v.mem, v.turnKey, v.h, v.turn = mem, k, h, *turn
		*turn = nil
	}
}

func (v *sessionView) release() {
	if v.turn != nil {
		v.mem.release(v.turnKey, v.h, v.turn)
		v.mem, v.turn, v.turnKey = nil, nil, memKey{}
	}
	// Only the references: clearing the whole view (its buffers) costs more than the rest of the
	// view's handling. What the buffers still reference is a few small strings of recent steps.
	v.sess, v.agent, v.step, v.plan, v.err = nil, nil, nil, nil, nil
	v.schemaLabels, v.stepLabels = nil, nil
	v.labels, v.labelsOK = evaluator.Data{}, false
	v.c = SessionCommit{}
	views.Put(v)
}

// errSessionStore wraps a store failure as the error of the leaves that read session state.
type errSessionStore struct{ err error }

func (e errSessionStore) Error() string { return "session store unavailable: " + e.err.Error() }
func (e errSessionStore) Unwrap() error { return e.err }

// sessionIDOf returns the session id of step (context.session_id), "" when it has none.
func sessionIDOf(step *Step) (string, error) {
	v, ok := step.Context["session_id"]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", &ValidationError{Problems: []Problem{{Field: "step.context.session_id", Code: CodeType, Message: "must be a string"}}}
	}
	if len(s) > MaxSessionIDBytes {
		return "", &ValidationError{Problems: []Problem{{Field: "step.context.session_id", Code: CodeInvalid, Message: fmt.Sprintf("must be at most %d bytes", MaxSessionIDBytes)}}}
	}
	return s, nil
}

// CheckSessionID validates the session id of step, as the engine does: the server calls it for every
// evaluation, so that a bad id is a 422 whatever the agent's controls.
func CheckSessionID(step *Step) error {
	if step == nil {
		return nil
	}
	_, err := sessionIDOf(step)
	return err
}

// newView builds the view of one evaluation from the stored states.
func (e *Engine) newView(plan *sessionPlan, id string, sess, ag *SessionState, step *Step, stage Stage, now time.Time) *sessionView {
	v := getView()
	v.id, v.sess, v.agent, v.now, v.stage, v.step, v.plan = id, sess, ag, now.UnixMilli(), stage, step, plan
	if stage == StagePre {
		v.schemaLabels = e.sessShared().stepLabels.Of(step.Name)
		v.stepLabels = plan.labelSteps[step.Name]
		seqName := step.Name
		add := func(l LabelOrigin) {
			if !sess.hasLabel(l.Label) && !hasOwn(v.own, l.Label) && len(v.own) < MaxSessionLabels {
				l.StepName = seqName
				v.own = append(v.own, l)
			}
		}
		for _, l := range v.schemaLabels {
			add(LabelOrigin{Label: l, By: "step schema"})
		}
		for _, l := range v.stepLabels {
			add(l)
		}
		for _, sel := range plan.counters {
			if a, ok := v.contribution(sel); ok {
				v.adds = append(v.adds, a)
			}
		}
		for _, sel := range plan.agentCtrs {
			if a, ok := v.contribution(sel); ok {
				v.agAdds = append(v.agAdds, a)
			}
		}
	}
	return v
}

func hasOwn(own []LabelOrigin, l string) bool {
	for i := range own {
		if own[i].Label == l {
			return true
		}
	}
	return false
}

// carries reports whether the step carries label l (step schema, label_steps), whether or not its
// session has the label already.
func (v *sessionView) carries(l string) bool {
	for _, x := range v.schemaLabels {
		if x == l {
			return true
		}
	}
	return hasOwn(v.stepLabels, l)
}

// counterKeyFor is the state key of counter selector sel for the current step.
func (v *sessionView) counterKeyFor(sel *sessionSel) string {
	if sel.kind != sessCount {
		return sel.key
	}
	// The key depends on the step's name: built once per evaluation and selector.
	for i := range v.keys {
		if v.keys[i].sel == sel {
			return v.keys[i].key
		}
	}
	st := v.sess
	if sel.agent {
		st = v.agent
	}
	k := st.keyOf(sel.keyPre, v.step.Name)
	if k == "" { // a step name the state has not counted yet
		k = sel.keyPre + v.step.Name
	}
	v.keys = append(v.keys, selKey{sel, k})
	return k
}

// selKey is a counter key built for one evaluation.
type selKey struct {
	sel *sessionSel
	key string
}

// contribution is what the current step adds to counter sel (pre stage only).
func (v *sessionView) contribution(sel *sessionSel) (counterAdd, bool) {
	a := counterAdd{key: v.counterKeyFor(sel), window: sel.window.Milliseconds()}
	switch sel.kind {
	case sessCount:
		a.add = 1
	case sessCountNamed:
		if v.step.Name != sel.name && !v.carries(sel.name) {
			return a, false
		}
		a.add = 1
	case sessSum:
		n, ok := number(sel.field.resolve(v.step))
		if !ok || n == 0 {
			return a, false
		}
		a.add = n
	}
	return a, true
}

// number returns v as a finite number.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, x == x && x < 1e308 && x > -1e308
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case interface{ Float64() (float64, error) }: // json.Number
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// labelData is session.labels: the session's labels in order of acquisition, then the step's own.
func (v *sessionView) labelData() evaluator.Data {
	if len(v.own) == 0 {
		return v.sess.labelsData()
	}
	var names []string
	if v.sess != nil {
		for _, l := range v.sess.Labels {
			names = append(names, l.Label)
		}
	}
	for _, l := range v.own {
		names = append(names, l.Label)
	}
	vals := make([]any, len(names))
	for i, n := range names {
		vals[i] = n
	}
	return evaluator.Data{Value: vals, Text: listText(names)}
}

// data is the value a session selector selects.
func (v *sessionView) data(sel *sessionSel) (evaluator.Data, error) {
	if v == nil {
		return evaluator.Data{}, nil
	}
	if v.err != nil {
		return evaluator.Data{}, errSessionStore{v.err}
	}
	switch sel.kind {
	case sessID:
		if v.id == "" {
			return evaluator.Data{}, nil
		}
		return evaluator.Data{Value: v.id, Text: v.id}, nil
	case sessLabels:
		if !v.labelsOK {
			v.labels, v.labelsOK = v.labelData(), true
		}
		return v.labels, nil
	case sessSteps:
		return v.sess.stepsData(), nil
	}
	n := v.counterValue(sel)
	text, err := numberText(n)
	if err != nil {
		return evaluator.Data{}, err
	}
	return evaluator.Data{Value: boxNumber(n), Text: text}, nil
}

// smallNumbers are the whole numbers 0 to 255 as values of Data: counts below 256 (a tool-loop's
// threshold, a rule's few steps) are selected without allocating.
var smallNumbers = func() (a [256]any) {
	for i := range a {
		a[i] = float64(i)
	}
	return a
}()

// boxNumber is n as a Data value.
func boxNumber(n float64) any {
	if n >= 0 && n < float64(len(smallNumbers)) && n == float64(int(n)) {
		return smallNumbers[int(n)]
	}
	return n
}

// numberText is the text form of a count or sum, as textForm writes it, without textForm's growing
// buffer: counts are whole numbers, whose digits strconv writes directly (without allocating below 100).
func numberText(n float64) (string, error) {
	if n == float64(int64(n)) && n > -1e15 && n < 1e15 && (n != 0 || !math.Signbit(n)) {
		return strconv.FormatInt(int64(n), 10), nil
	}
	var buf [32]byte
	b, ok := jsonstr.AppendFloat(buf[:0], n)
	if !ok {
		_, text, err := textForm(n) // NaN or an infinite sum: textForm's error
		return text, err
	}
	return string(b), nil
}

// counterValue is the value of counter sel with the current step's contribution.
func (v *sessionView) counterValue(sel *sessionSel) float64 {
	st := v.sess
	if sel.agent {
		st = v.agent
	}
	key := v.counterKeyFor(sel)
	n := st.counter(key, sel.window.Milliseconds(), v.now)
	if v.stage == StagePre {
		if a, ok := v.contribution(sel); ok {
			n += a.add
		}
	}
	return n
}

// maxSessionAttempts bounds the evaluations of one step when its session changes under it (parallel
// tool calls of one session): a loser yields before evaluating again, so that the winner finishes.
const maxSessionAttempts = 16

// errSessionContended is the store error of a step whose session kept changing under it.
var errSessionContended = errors.New("the session changed during every attempt to evaluate the step")

// sessOutcome is what an evaluation decided, as far as session state is concerned.
type sessOutcome struct {
	decision Decision
	winner   *cControl   // the control that blocked the step (nil when let through)
	effects  []*cControl // let through: the controls with add_labels that count as matched
}

// outcomeOf reads the outcome of an Evaluate result.
func outcomeOf(snap *snapshot, res *Result) sessOutcome {
	o := sessOutcome{decision: res.Decision}
	if blocks(res.Decision) {
		o.winner = winnerControl(snap, res)
		return o
	}
	if snap.session == nil {
		return o
	}
	for _, ci := range snap.session.effects {
		if c := &snap.controls[ci]; countsMatched(res, c) {
			o.effects = append(o.effects, c)
		}
	}
	return o
}

// sessionLoop runs one evaluation of step with session state: it reads the states, evaluates (try),
// and commits what the step added; on a version conflict it evaluates again on the state another
// evaluation stored. When the store fails, it evaluates once more with the leaves that read session
// state failing (their on_error decides, deny by default) and commits nothing. It returns the view of
// the evaluation whose outcome stands.
func (e *Engine) sessionLoop(ctx context.Context, snap *snapshot, step *Step, stage Stage, try func(v *sessionView) sessOutcome) (*sessionView, error) {
	return e.sessionLoopPlan(ctx, snap, snap.session, step, stage, try, nil)
}

// sessionLoopPlan is sessionLoop with the plan of the enforced controls and, when pass is not nil, the
// shadow controls evaluated in each attempt on the states it read, before its commit
// (EvaluateWithShadow).
func (e *Engine) sessionLoopPlan(ctx context.Context, snap *snapshot, plan *sessionPlan, step *Step, stage Stage,
	try func(v *sessionView) sessOutcome, pass *shadowPass) (*sessionView, error) {
	id, err := sessionIDOf(step)
	if err != nil {
		return nil, err
	}
	sh := e.sessShared()
	store := sh.sessionStore()
	readsAgent := plan.readsAgent || (pass != nil && pass.snap.session.readsAgent)
	now := sh.now()
	if t, ok := ctx.Value(evaluationTimeKey{}).(time.Time); ok {
		now = t
	}
	// The in-memory store is called directly with the hash of the session's key, computed once.
	mem, _ := store.(*MemorySessionStore)
	var h uint64
	if mem != nil && id != "" {
		h = mem.hash(memKey{sh.agent, id})
	}
	var sess, ag *SessionState
	var lastErr error
	var turn *memTurn
	key := memKey{sh.agent, id}
	switch {
	case mem != nil && id != "":
		// Steps of one session evaluated at once in this process (parallel tool calls) take turns
		// instead of conflicting, each session its own turn; shadow evaluations too, since the store
		// reuses the state before last for the next one (session_turns.go). The view returned holds
		// the turn until it is released, after the caller has read the history.
		turn, sess = mem.acquireLoad(key, h, now.UnixMilli())
		defer func() {
			if turn != nil { // not handed to a view: a panic
				mem.release(key, h, turn)
			}
		}()
		if readsAgent {
			_, ag = mem.load(sh.agent, "", 0, true, now.UnixMilli())
		}
	case mem != nil:
		_, ag = mem.load(sh.agent, "", 0, readsAgent, now.UnixMilli())
	default:
		if ser, ok := store.(SessionSerializer); ok && id != "" && !e.cfg.shadow {
			// The same for other stores, by the turns they give (SessionSerializer); the
			// version check is left for other processes.
			defer ser.SessionTurn(sh.agent, id)()
		}
		sess, ag, lastErr = store.Load(ctx, sh.agent, id, readsAgent, now)
	}
	for attempt := 0; lastErr == nil && attempt < maxSessionAttempts; attempt++ {
		v := e.newView(plan, id, sess, ag, step, stage, now)
		out := try(v)
		if e.cfg.shadow {
			v.holdTurn(mem, key, h, &turn)
			return v, nil // a shadow engine reads the state and never writes it
		}
		c := v.commit(out)
		if pass != nil {
			pass.run(ctx, id, sess, ag, step, stage, now, nil, out, c)
		}
		if !c.Write && len(c.AgentAdds) == 0 {
			v.holdTurn(mem, key, h, &turn)
			return v, nil
		}
		c.Agent, c.Now = sh.agent, now
		var ok bool
		var cur *SessionState
		var err error
		if mem != nil {
			ok, cur, err = mem.commit(c, h)
		} else {
			ok, cur, err = store.Commit(ctx, c)
		}
		if err != nil {
			lastErr = err
			break
		}
		if ok {
			v.holdTurn(mem, key, h, &turn)
			return v, nil
		}
		if c.AgentState != nil {
			ag = c.AgentState // an agent-wide counter moved past a bound its controls read: again on it
		}
		v.release()
		sess = cur
		if attempt == maxSessionAttempts-1 {
			lastErr = errSessionContended
		} else if attempt > 0 {
			runtime.Gosched()
		}
	}
	sh.errors.Add(1)
	v := getView()
	v.id, v.err, v.stage, v.step, v.plan = id, lastErr, stage, step, plan
	v.holdTurn(mem, key, h, &turn)
	out := try(v)
	if pass != nil {
		pass.run(ctx, id, nil, nil, step, stage, now, lastErr, out, nil)
	}
	return v, nil
}

// evaluateSession is Evaluate on a snapshot whose controls use session state.
func (e *Engine) evaluateSession(ctx context.Context, snap *snapshot, step *Step, stage Stage) (*Result, error) {
	var res *Result
	v, err := e.sessionLoop(ctx, snap, step, stage, func(v *sessionView) sessOutcome {
		res = e.evaluate(ctx, snap, step, stage, v)
		return outcomeOf(snap, res)
	})
	if err != nil {
		return nil, err
	}
	v.finish(snap, res)
	v.release()
	return res, nil
}

// commit is what an evaluation with outcome out writes: the session's delta (Write false when nothing
// changes) and the agent's counter contributions.
func (v *sessionView) commit(out sessOutcome) *SessionCommit {
	v.c = SessionCommit{Session: v.id, BaseState: v.sess, Labels: v.lblBuf[:0]}
	c := &v.c
	if v.sess != nil {
		c.Base = v.sess.Version
	}
	allowed := !blocks(out.decision)
	seq := int64(0)
	if v.sess != nil {
		seq = v.sess.Seq
	}
	if v.stage == StagePre {
		seq++
		v.rec = StepRecord{Seq: seq, Type: v.step.Type, Name: v.step.Name, Decision: out.decision, At: v.now}
		c.Record = &v.rec
	}
	if allowed {
		for _, l := range v.own {
			l.Step = seq
			c.Labels = append(c.Labels, l)
		}
		for _, ec := range out.effects {
			c.Labels = appendEffect(c.Labels, ec, seq, v.step.Name)
		}
	} else if out.winner != nil && out.winner.effect != nil {
		c.Labels = appendEffect(c.Labels, out.winner, seq, v.step.Name)
	}
	c.Write = v.id != "" && (c.Record != nil || len(c.Labels) > 0)
	if allowed && c.Write {
		c.Adds = exportAdds(v.cAddBuf[:0], v.adds)
	}
	if allowed && len(v.agAdds) > 0 {
		c.AgentAdds = exportAdds(nil, v.agAdds)
	}
	if allowed && len(v.plan.agentCtrs) > 0 && v.err == nil {
		c.AgentChecks = v.agentCheckList(v.chkBuf[:0])
	}
	return c
}

// exportAdds appends the exported form of in to out (nil when in is empty).
func exportAdds(out []CounterAdd, in []counterAdd) []CounterAdd {
	if len(in) == 0 {
		return nil
	}
	for _, a := range in {
		out = append(out, CounterAdd{Key: a.key, WindowMS: a.window, Add: a.add})
	}
	return out
}

func appendEffect(labels []LabelOrigin, c *cControl, seq int64, stepName string) []LabelOrigin {
	for _, l := range c.effect.AddLabels {
		labels = append(labels, LabelOrigin{Label: l, Step: seq, StepName: stepName, By: labelsBy("control", c.name)})
	}
	return labels
}

// countsMatched reports whether control c counts as matched in res (a match, or an error under
// on_error deny).
func countsMatched(res *Result, c *cControl) bool {
	for i := range res.Matches {
		if m := &res.Matches[i]; m.ControlID == c.id && m.ControlName == c.name {
			return m.Result.Matched
		}
	}
	for i := range res.Errors {
		if m := &res.Errors[i]; m.ControlID == c.id && m.ControlName == c.name {
			return m.Result.Matched
		}
	}
	return false
}

// winnerControl is the compiled control that decided a blocked result.
func winnerControl(snap *snapshot, res *Result) *cControl {
	var w *ControlResult
	for _, list := range [][]ControlResult{res.Matches, res.Errors} {
		for i := range list {
			if list[i].Action == res.Decision && list[i].Result.Matched {
				w = &list[i]
				break
			}
		}
		if w != nil {
			break
		}
	}
	if w == nil {
		return nil
	}
	for i := range snap.controls {
		if c := &snap.controls[i]; c.id == w.ControlID && c.name == w.ControlName {
			return c
		}
	}
	return nil
}

// SessionOutcome is the session part of a result: the session, the step's number in it and, when a
// control that reads session state blocked the step, the history that made it block.
type SessionOutcome struct {
	ID      string        `json:"id"`
	Step    int64         `json:"step,omitempty"` // the step's sequence number (pre stage; the last step's at post)
	History []SessionFact `json:"history,omitempty"`
}

// SessionFact is one piece of session state the deciding control read.
type SessionFact struct {
	Selector string   `json:"selector"`
	Label    string   `json:"label,omitempty"`
	Step     int64    `json:"step,omitempty"`      // the step that added Label (0: this step)
	StepName string   `json:"step_name,omitempty"` // its name
	By       string   `json:"by,omitempty"`        // what added the label
	Value    *float64 `json:"value,omitempty"`     // a count or sum, this step included
	Window   string   `json:"window,omitempty"`
	Steps    []string `json:"steps,omitempty"` // session.steps
}

// finish sets Result.Session and, for a step blocked by a control that reads session state, names the
// history in the result and its reason.
func (v *sessionView) finish(snap *snapshot, res *Result) {
	if v.id != "" {
		seq := int64(0)
		if v.sess != nil {
			seq = v.sess.Seq
		}
		if v.stage == StagePre {
			seq++
		}
		if v.err != nil {
			seq = 0 // the store failed: the step's number is not known
		}
		res.Session = &SessionOutcome{ID: v.id, Step: seq}
	}
	if !blocks(res.Decision) || v.err != nil {
		return
	}
	facts := v.history(snap, winnerControl(snap, res))
	if len(facts) == 0 {
		return
	}
	if res.Session == nil {
		res.Session = &SessionOutcome{}
	}
	res.Session.History = facts
	res.Reason += " (session history: " + historyText(facts) + ")"
}

// history is what control w, which blocked the step, read of the session (nil when it reads nothing).
func (v *sessionView) history(snap *snapshot, w *cControl) []SessionFact {
	if w == nil || !w.sessionReads || v.err != nil {
		return nil
	}
	var facts []SessionFact
	for _, pid := range w.paths {
		sel := snap.paths[pid].sel.sess
		if sel == nil {
			continue
		}
		raw := snap.paths[pid].sel.raw
		switch sel.kind {
		case sessLabels:
			if v.sess != nil {
				for _, l := range v.sess.Labels {
					facts = append(facts, SessionFact{Selector: raw, Label: l.Label, Step: l.Step, StepName: l.StepName, By: l.By})
				}
			}
			for _, l := range v.own {
				facts = append(facts, SessionFact{Selector: raw, Label: l.Label, StepName: l.StepName, By: l.By})
			}
		case sessSteps:
			if vals, ok := v.sess.stepsData().Value.([]any); ok {
				names := make([]string, len(vals))
				for i, n := range vals {
					names[i], _ = n.(string)
				}
				facts = append(facts, SessionFact{Selector: raw, Steps: names})
			}
		case sessCount, sessCountNamed, sessSum:
			n := v.counterValue(sel)
			f := SessionFact{Selector: raw, Value: &n}
			if sel.window > 0 {
				f.Window = sel.window.String()
			}
			facts = append(facts, f)
		}
	}
	return facts
}

// historyText is the human form of the facts, for the reason.
func historyText(facts []SessionFact) string {
	parts := make([]string, 0, len(facts))
	for _, f := range facts {
		switch {
		case f.Label != "" && f.Step > 0:
			parts = append(parts, fmt.Sprintf("step %d (%s) added label %s", f.Step, f.StepName, f.Label))
		case f.Label != "":
			parts = append(parts, fmt.Sprintf("this step (%s) carries label %s", f.StepName, f.Label))
		case f.Steps != nil:
			parts = append(parts, "earlier steps "+strings.Join(f.Steps, ", "))
		case f.Value != nil && f.Window != "":
			parts = append(parts, fmt.Sprintf("%s = %g within %s", f.Selector, *f.Value, f.Window))
		case f.Value != nil:
			parts = append(parts, fmt.Sprintf("%s = %g", f.Selector, *f.Value))
		}
	}
	return strings.Join(parts, "; ")
}

// sessionData is the data session selector sel of path p selects (dataFor's session branch).
func (sc *scratch) sessionData(p int32, sel *sessionSel) (*evaluator.Data, error) {
	d, err := sc.sess.data(sel)
	if err != nil {
		sc.dstate[p] = dataFailed
		sc.derr[p] = err
		return nil, err
	}
	sc.data[p] = d
	sc.dstate[p] = dataReady
	return &sc.data[p], nil
}
