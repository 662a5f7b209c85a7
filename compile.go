package guard

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"

	"github.com/guardrail-control/guard/evaluator"
)

// compile validates controls and compiles those the engine runs into a snapshot. It never returns a
// partial snapshot: any problem fails the whole set with a *ValidationError whose field paths start
// with controls.<index>.
func compile(controls []Control, cfg *engineConfig) (*snapshot, error) {
	c := compiler{cfg: cfg, pathIDs: make(map[string]int32)}
	var problems []Problem
	for i := range controls {
		prefix := "controls." + strconv.Itoa(i)
		data := controls[i].Data // a shallow copy: validation may normalise it
		execution := data.Execution
		if execution == "" {
			execution = ExecutionServer
		}
		runs := data.Enabled && cfg.executions[execution]
		opts := []ValidateOption{WithValidationRegistry(cfg.registry)}
		if !runs {
			// A control the engine does not run may name evaluators only its runner has.
			opts = append(opts, AllowUnknownEvaluators())
		}
		if err := data.Validate(opts...); err != nil {
			var ve *ValidationError
			if errors.As(err, &ve) {
				problems = append(problems, ve.WithPrefix(prefix).Problems...)
			} else {
				problems = append(problems, Problem{Field: prefix, Code: CodeInvalid, Message: err.Error()})
			}
			continue
		}
		if !runs {
			continue
		}
		cc, ps := c.control(&controls[i], &data, prefix)
		if len(ps) > 0 {
			problems = append(problems, ps...)
			continue
		}
		c.snap.controls = append(c.snap.controls, cc)
	}
	if len(problems) > 0 {
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
	}
	s.paths = c.paths
	buildIndex(s)
	buildPrefilter(s)
	s.pool.New = func() any { return newScratch(s) }
	return s, nil
}

// compiler holds the state of one compilation.
type compiler struct {
	cfg     *engineConfig
	snap    snapshot
	paths   []cPath
	pathIDs map[string]int32
}

func (c *compiler) control(ctl *Control, d *ControlData, prefix string) (cControl, []Problem) {
	decision := d.Action.Decision
	if decision == DecisionObserve {
		decision = DecisionLog
	}
	cc := cControl{
		id:       ctl.ID,
		name:     ctl.Name,
		decision: decision,
		class:    decisionClass(decision),
		metadata: d.Action.Metadata,
		scope:    d.Scope,
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
	if n.Selector == nil || n.Evaluator == nil {
		*problems = append(*problems, Problem{Field: field, Code: CodeShape, Message: "a leaf needs both selector and evaluator"})
		return nil
	}
	built, err := c.cfg.registry.Build(n.Evaluator.Name, n.Evaluator.Config)
	if err != nil {
		var ce *evaluator.ConfigError
		switch {
		case errors.Is(err, evaluator.ErrUnknownEvaluator):
			*problems = append(*problems, Problem{Field: field + ".evaluator.name", Code: CodeUnknownEvaluator, Message: "is not a registered, available evaluator"})
		case errors.As(err, &ce):
			for _, fe := range ce.Problems {
				f := field + ".evaluator.config"
				if fe.Field != "" {
					f += "." + fe.Field
				}
				*problems = append(*problems, Problem{Field: f, Code: fe.Code, Message: fe.Message})
			}
		default:
			*problems = append(*problems, Problem{Field: field + ".evaluator", Code: CodeInvalid, Message: "cannot be built"})
		}
		return nil
	}
	pid, ok := c.pathIDs[n.Selector.Path]
	if !ok {
		pid = int32(len(c.paths))
		c.pathIDs[n.Selector.Path] = pid
		c.paths = append(c.paths, cPath{sel: compileSelectorPath(n.Selector.Path)})
	}
	if !seen[pid] {
		seen[pid] = true
		cc.paths = append(cc.paths, pid)
	}
	l := &cLeaf{
		path:     pid,
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
	}
	return l
}
