package guard

import (
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/guardrail-control/guard/evaluator"
)

// compile validates controls and compiles those the engine runs into a snapshot. Problems are reported
// in a *ValidationError whose field paths start with controls.<index>.
//
// Strict (tolerant false), it never returns a partial snapshot: any problem fails the whole set and the
// snapshot is nil. Tolerant (see Engine.UpdateTolerant), it always returns a snapshot: a leaf whose
// evaluator cannot be built becomes a failing leaf, a control that does not validate becomes a
// fail-closed control, and the error lists what was degraded.
//
// Validation and evaluator building (regex compilation, list normalisation: the bulk of the work) run
// in parallel over the controls; assembling the snapshot is sequential and deterministic.
func compile(controls []Control, cfg *engineConfig, tolerant bool) (*snapshot, error) {
	preps := make([]prepared, len(controls))
	cache := newBuildCache(cfg.registry)
	parallel(len(controls), func(i int) {
		preps[i] = prepare(&controls[i], cfg, cache, "controls."+strconv.Itoa(i), tolerant)
	})
	c := compiler{cfg: cfg, pathIDs: make(map[string]int32), tolerant: tolerant}
	c.snap.controls = make([]cControl, 0, len(controls))
	var problems []Problem
	for i := range controls {
		p := &preps[i]
		if len(p.problems) > 0 {
			problems = append(problems, p.problems...)
			if tolerant {
				c.snap.controls = append(c.snap.controls, c.failClosed(&controls[i]))
			}
			continue
		}
		if !p.runs {
			continue
		}
		c.builds, c.next, c.degraded = p.builds, 0, nil
		cc, ps := c.control(&controls[i], &p.data, p.prefix)
		if len(ps) > 0 {
			problems = append(problems, ps...)
			if !tolerant {
				continue
			}
			cc = c.failClosed(&controls[i])
		}
		problems = append(problems, c.degraded...)
		c.snap.controls = append(c.snap.controls, cc)
	}
	if len(problems) > 0 && !tolerant {
		return nil, &ValidationError{Problems: problems}
	}
	s := &c.snap
	sort.SliceStable(s.controls, func(i, j int) bool {
		a, b := &s.controls[i], &s.controls[j]
		if a.class != b.class {
			return a.class < b.class
		}
		return a.id < b.id
	})
	for i := range s.controls {
		if s.controls[i].hasExternal {
			s.hasExternal = true
		}
		if s.controls[i].redactWith != "" {
			s.hasRedact = true
		}
		if s.controls[i].approval != nil {
			s.hasApproval = true
		}
	}
	s.paths = c.paths
	for i := range s.controls {
		if s.controls[i].redactWith != "" {
			assignSpanSlots(s, &s.controls[i].root)
		}
	}
	s.session = buildSessionPlan(s)
	buildIndex(s)
	buildPrefilter(s)
	if !cfg.noRunPrefilter {
		buildRunPrefilter(s)
	}
	if cfg.liveIndexMin >= 0 {
		s.liveMin = defaultLiveIndexMin
		if cfg.liveIndexMin > 0 {
			s.liveMin = cfg.liveIndexMin
		}
		buildLiveIndex(s)
	}
	s.pool.New = func() any { return newScratch(s) }
	if len(problems) > 0 {
		return s, &ValidationError{Problems: problems}
	}
	return s, nil
}

// prepared is a validated control with its evaluators built, leaf by leaf in tree order.
type prepared struct {
	prefix   string
	data     ControlData
	runs     bool
	problems []Problem
	builds   []built
}

type built struct {
	b   *evaluator.Built
	err error
}

// prepare validates one control and, if the engine runs it, builds its evaluators. Tolerant, a control
// the engine does not run is not validated (it is dropped whatever its problems), and unknown evaluator
// names are not validation problems (the compiler degrades their leaves).
func prepare(ctl *Control, cfg *engineConfig, cache *buildCache, prefix string, tolerant bool) prepared {
	p := prepared{prefix: prefix, data: ctl.Data} // a shallow copy: validation may normalise it
	execution := p.data.Execution
	if execution == "" {
		execution = ExecutionServer
	}
	p.runs = p.data.Enabled && cfg.executions[execution] && (p.data.Mode == ModeShadow) == cfg.shadow
	if tolerant && !p.runs {
		return p
	}
	opts := []ValidateOption{WithValidationRegistry(cfg.registry)}
	if p.runs {
		// The compiler builds every evaluator right after and reports config problems itself:
		// build each once, not twice.
		opts = append(opts, SkipEvaluatorConfigs())
	}
	if tolerant || !p.runs {
		// A control the engine does not run may name evaluators only its runner has; tolerant, a
		// missing evaluator degrades its leaf instead.
		opts = append(opts, AllowUnknownEvaluators())
	}
	if err := p.data.Validate(opts...); err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) {
			p.problems = ve.WithPrefix(prefix).Problems
		} else {
			p.problems = []Problem{{Field: prefix, Code: CodeInvalid, Message: "is not valid control data"}}
		}
		return p
	}
	if p.runs {
		p.builds = buildLeaves(&p.data.Condition, cache, p.builds, 0)
	}
	return p
}

// buildLeaves builds the evaluator of every leaf in the order compiler.node visits them.
func buildLeaves(n *Condition, cache *buildCache, out []built, depth int) []built {
	if depth > MaxConditionDepth {
		return out
	}
	switch {
	case n.IsLeaf():
		if n.Selector == nil || n.Evaluator == nil {
			return append(out, built{err: errors.New("incomplete leaf")})
		}
		return append(out, cache.build(n.Evaluator.Name, n.Evaluator.Config))
	case len(n.And) > 0:
		for i := range n.And {
			out = buildLeaves(&n.And[i], cache, out, depth+1)
		}
	case len(n.Or) > 0:
		for i := range n.Or {
			out = buildLeaves(&n.Or[i], cache, out, depth+1)
		}
	case n.Not != nil:
		out = buildLeaves(n.Not, cache, out, depth+1)
	}
	return out
}

// parallel runs f(0..n-1) on up to GOMAXPROCS goroutines (inline for small n).
func parallel(n int, f func(i int)) {
	workers := runtime.GOMAXPROCS(0)
	if per := 32; n/per < workers {
		workers = n / per
	}
	if workers <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				f(i)
			}
		}()
	}
	wg.Wait()
}

// compiler holds the state of one compilation.
type compiler struct {
	cfg      *engineConfig
	snap     snapshot
	paths    []cPath
	pathIDs  map[string]int32
	builds   []built // evaluators of the control being compiled, in leaf order
	next     int
	tolerant bool      // degrade leaves whose evaluator cannot be built instead of failing
	degraded []Problem // tolerant: the problems of the degraded leaves of the control being compiled
}

func (c *compiler) control(ctl *Control, d *ControlData, prefix string) (cControl, []Problem) {
	// observe behaves as log (classOther) and is reported as written: the reference's clients know
	// observe, not log.
	decision := d.Action.Decision
	cc := cControl{
		id:       ctl.ID,
		version:  ctl.Version,
		name:     ctl.Name,
		decision: decision,
		class:    decisionClass(decision),
		metadata: d.Action.Metadata,
		scope:    d.Scope,
		effect:   d.Action.Session,
	}
	if d.Action.Redact != nil && !c.cfg.shadow {
		cc.redactWith = d.Action.Redact.replacement()
	}
	if d.Action.Approval != nil && !c.cfg.shadow && (decision == DecisionDeny || decision == DecisionSteer) {
		cc.approval = d.Action.Approval
	}
	if decision == DecisionSteer && d.Action.SteeringContext != nil {
		sc := *d.Action.SteeringContext
		cc.steering = &sc
	}
	var problems []Problem
	if d.Scope.StepNameRegex != "" {
		rx, err := regexp.Compile(d.Scope.StepNameRegex)
		if err != nil {
			problems = append(problems, Problem{Field: prefix + ".scope.step_name_regex", Code: CodeInvalidRegex, Message: "is not a valid regular expression"})
		}
		cc.nameRx = rx
	}
	seen := map[int32]bool{}
	cc.root = c.node(&d.Condition, prefix+".condition", &cc, seen, &problems, 0)
	return cc, problems
}

func (c *compiler) node(n *Condition, field string, cc *cControl, seen map[int32]bool, problems *[]Problem, depth int) cNode {
	if depth > MaxConditionDepth {
		*problems = append(*problems, Problem{Field: field, Code: CodeMaxDepth, Message: fmt.Sprintf("condition is nested deeper than %d levels", MaxConditionDepth)})
		return cNode{}
	}
	switch {
	case n.IsLeaf():
		return cNode{kind: nodeLeaf, leaf: c.leaf(n, field, cc, seen, problems)}
	case len(n.And) > 0:
		out := cNode{kind: nodeAnd, kids: make([]cNode, len(n.And))}
		for i := range n.And {
			out.kids[i] = c.node(&n.And[i], field+".and."+strconv.Itoa(i), cc, seen, problems, depth+1)
		}
		return out
	case len(n.Or) > 0:
		out := cNode{kind: nodeOr, kids: make([]cNode, len(n.Or))}
		for i := range n.Or {
			out.kids[i] = c.node(&n.Or[i], field+".or."+strconv.Itoa(i), cc, seen, problems, depth+1)
		}
		return out
	case n.Not != nil:
		return cNode{kind: nodeNot, kids: []cNode{c.node(n.Not, field+".not", cc, seen, problems, depth+1)}}
	}
	*problems = append(*problems, Problem{Field: field, Code: CodeShape, Message: "must be a leaf, and, or or not"})
	return cNode{}
}

func (c *compiler) leaf(n *Condition, field string, cc *cControl, seen map[int32]bool, problems *[]Problem) *cLeaf {
	if c.next >= len(c.builds) || n.Selector == nil || n.Evaluator == nil {
		c.next++
		*problems = append(*problems, Problem{Field: field, Code: CodeShape, Message: "a leaf needs both selector and evaluator"})
		return nil
	}
	bl := c.builds[c.next]
	c.next++
	built, err := bl.b, bl.err
	if err != nil {
		ps := buildProblems(c.cfg.registry, n.Evaluator.Name, field, err)
		if !c.tolerant {
			*problems = append(*problems, ps...)
			return nil
		}
		c.degraded = append(c.degraded, ps...)
		built = unavailableBuilt(c.cfg.registry, n.Evaluator, err)
	}
	l := &cLeaf{
		path:     c.pathIDSel(n.Selector, cc, seen),
		ev:       built.Evaluator,
		evName:   n.Evaluator.Name,
		onError:  built.OnError,
		timeout:  built.Timeout,
		external: built.Factory != nil && built.Factory.External,
		specMeta: n.Evaluator.Metadata,
	}
	if l.external {
		cc.hasExternal = true
	}
	if cc.firstLeaf == nil {
		cc.firstLeaf = l
		cc.evName, cc.selPath = l.evName, c.paths[l.path].sel.raw
	}
	return l
}

// pathID returns the snapshot-wide id of selector path raw and records it among cc's paths.
func (c *compiler) pathID(raw string, cc *cControl, seen map[int32]bool) int32 {
	pid, ok := c.pathIDs[raw]
	if !ok {
		pid = int32(len(c.paths))
		c.pathIDs[raw] = pid
		c.paths = append(c.paths, cPath{sel: compileSelectorPath(raw)})
	}
	if !seen[pid] {
		seen[pid] = true
		cc.paths = append(cc.paths, pid)
	}
	return pid
}

// buildProblems reports why the evaluator of the leaf at field could not be built, with the same
// problems, in the same order, as validation reports them.
func buildProblems(reg *evaluator.Registry, name, field string, err error) []Problem {
	var ce *evaluator.ConfigError
	switch {
	case errors.Is(err, evaluator.ErrUnknownEvaluator):
		msg := "is not a registered, available evaluator"
		if hint := evaluator.MissingHint(reg, name); hint != "" {
			msg += ": " + hint // which package a Go program evaluating locally must import
		}
		return []Problem{{Field: field + ".evaluator.name", Code: CodeUnknownEvaluator, Message: msg}}
	case errors.As(err, &ce) && len(ce.Problems) > 0:
		fes := append([]evaluator.FieldError(nil), ce.Problems...)
		sort.SliceStable(fes, func(i, j int) bool { return fes[i].Field < fes[j].Field })
		out := make([]Problem, 0, len(fes))
		for _, fe := range fes {
			f := field + ".evaluator.config"
			if fe.Field != "" {
				f += "." + fe.Field
			}
			code, msg := fe.Code, fe.Message
			if code == "" {
				code = CodeInvalid
			}
			if msg == "" {
				msg = "is invalid"
			}
			out = append(out, Problem{Field: f, Code: code, Message: msg})
		}
		return out
	}
	return []Problem{{Field: field + ".evaluator.config", Code: CodeInvalid, Message: "is not a valid configuration for this evaluator"}}
}
