package guard

import (
	"regexp"
	"sync"
	"time"

	"github.com/guardrail-control/guard/evaluator"
	"github.com/guardrail-control/guard/internal/ahocorasick"
)

// Evaluation classes: the compiled controls are ordered by class, then by control id, so that deny
// controls are evaluated first (a matched deny ends the evaluation early), steer controls next, and the
// controls that never block last. Check stops before the last class.
const (
	classDeny uint8 = iota
	classSteer
	classOther
)

func decisionClass(d Decision) uint8 {
	switch d {
	case DecisionDeny:
		return classDeny
	case DecisionSteer:
		return classSteer
	}
	return classOther
}

// snapshot is an immutable compiled set of controls. Control indexes (int32) are positions in controls,
// which is the evaluation order; every index list below is sorted ascending.
type snapshot struct {
	controls    []cControl
	paths       []cPath
	stages      [2]stageIndex // StagePre, StagePost
	hasExternal bool
	hasRedact   bool     // some control has action.redact (Engine.Redacts)
	hasApproval bool     // some control has action.approval (resultBuilder.markApproval)
	spanSlots   int      // leaves that can redact (cLeaf.spanSlot)
	patWords    int      // words of the prefilter bitset over all paths
	runSets     []runSet // distinct (path, byte set) pairs of the run prefilter
	live        liveIndex
	liveMin     int          // candidates from which Check and Evaluate consult the live index (0: never, no index)
	session     *sessionPlan // what the controls read and write of session state; nil: nothing
	pool        sync.Pool
}

// stageIndex finds the controls of one stage that can apply to a step type.
type stageIndex struct {
	byType  map[string]*bucket // controls that name the step type in step_types
	anyType bucket             // controls without a step_types filter
}

// bucket finds the controls of one (stage, type) entry that can apply to a step name.
type bucket struct {
	all    []int32            // no name filter
	byName map[string][]int32 // step_names
	rx     []int32            // step_name_regex (a control with step_names too is in both)
}

// cControl is a compiled control.
type cControl struct {
	id          int64
	version     int
	name        string
	decision    Decision
	class       uint8
	steering    *SteeringContext
	metadata    map[string]any
	nameRx      *regexp.Regexp
	root        cNode
	hasExternal bool
	paths       []int32 // distinct selector paths of the leaves
	firstLeaf   *cLeaf
	evName      string // the first leaf's evaluator and selector path (ControlResult), kept here to be
	selPath     string // read without following firstLeaf
	scope       Scope  // kept for building the index
	// redactWith is the replacement template of a control with action.redact, "" for the others and in
	// a shadow engine (a shadow control never changes what the caller gets).
	redactWith string
	// approval is action.approval of an enforced deny or steer control (nil otherwise, and in a shadow
	// engine: a shadow control never asks anyone).
	approval *Approval
	// sessionReads: a leaf reads session or agent state; effect: action.session (session_eval.go)
	sessionReads bool
	effect       *SessionEffect
}

// Kinds of condition nodes.
const (
	nodeLeaf uint8 = iota
	nodeAnd
	nodeOr
	nodeNot
)

// cNode is a compiled condition node.
type cNode struct {
	kind uint8
	kids []cNode
	leaf *cLeaf
}

// cLeaf is a compiled selector + evaluator leaf.
type cLeaf struct {
	path     int32
	ev       evaluator.Evaluator
	evName   string
	onError  evaluator.OnError
	timeout  time.Duration
	external bool
	specMeta map[string]any
	// Prefilter: when filtered is set, the leaf can only match a string whose text contains one of
	// the literals at bit positions bits (in the snapshot-wide bitset).
	filtered  bool
	foldsCase bool
	bits      []int32
	// Run prefilter: when runMin > 0, the leaf can only match a string whose text has a run of at
	// least runMin bytes in the snapshot's run set runSet (see buildRunPrefilter).
	runSet int32
	runMin int32
	// Redaction: spanEv is set on a leaf that can redact (assignSpanSlots): an evaluation at the stage
	// whose payload is spanRoot (scratch.payload) calls spanEv.EvaluateSpans instead of Evaluate and keeps
	// what it found in scratch.found[spanSlot-1].
	spanEv   evaluator.SpanEvaluator
	spanSlot int32
	spanRoot selectorRoot
}

// cPath is a distinct selector path of the snapshot, with the automaton over the required literals of
// the leaves that select it.
type cPath struct {
	sel     selectorPath
	ac      *ahocorasick.Automaton // nil when no leaf of this path is filtered
	patBase int                    // first word of this path's bits in the prefilter bitset
	words   int
	runs    []int32 // the run sets (snapshot.runSets) of the leaves that select this path
}
