package guard

import (
	"fmt"
	"regexp"
)

// SessionEffect is what a control adds to the session of the step it is evaluated on (action.session).
//
// When it applies (docs/control-language.md, "Sessions"):
//   - AddLabels: at the stage the control is evaluated (pre or post), when the control counts as matched
//     (a genuine match, or an evaluator error under on_error deny) and either the step is let through
//     (decision allow, warn or log) or this control is the one that blocked it (the record of the attempt:
//     a deny control may mark the session as suspicious). Controls that matched on a step another control
//     blocked add nothing: the step did not run.
//   - LabelSteps: the steps named in each entry carry its label, whatever the control's condition and
//     scope, when they are let through at the pre stage; the step's own evaluation sees the label already
//     (session.labels lists it last), as it sees labels declared in the agent's step schemas.
type SessionEffect struct {
	AddLabels  []string    `json:"add_labels,omitempty"`
	LabelSteps []LabelStep `json:"label_steps,omitempty"`
}

// LabelStep gives a label to the steps of the listed names.
type LabelStep struct {
	Label string   `json:"label"`
	Steps []string `json:"steps"`
}

// Limits of session labels.
const (
	// MaxSessionLabels is the most labels a session holds (and an effect adds, and a step declares);
	// labels beyond it are not added.
	MaxSessionLabels = 32
	// MaxLabelBytes bounds one label.
	MaxLabelBytes = 64
	// MaxLabelSteps bounds the entries of label_steps and the step names of each.
	MaxLabelSteps = 32
)

// labelRx is what a label may be: letters, digits and _ . : - (it appears in reasons and in keys).
var labelRx = regexp.MustCompile(`^[A-Za-z0-9_.:-]+$`)

// checkLabel returns why s is not a valid label, or "".
func checkLabel(s string) string {
	switch {
	case s == "":
		return "must not be empty"
	case len(s) > MaxLabelBytes:
		return fmt.Sprintf("must be at most %d bytes", MaxLabelBytes)
	case !labelRx.MatchString(s):
		return "must consist of letters, digits and _ . : -"
	}
	return ""
}

// CheckLabels validates a list of labels (a step schema's labels, a gateway's annotation labels) and
// returns the problems, with fields path.<index>.
func CheckLabels(labels []string, path string) []Problem {
	var out []Problem
	if len(labels) > MaxSessionLabels {
		out = append(out, Problem{Field: path, Code: CodeInvalid, Message: fmt.Sprintf("must have at most %d labels", MaxSessionLabels)})
	}
	for i, l := range labels {
		if msg := checkLabel(l); msg != "" {
			out = append(out, Problem{Field: join(path, fmt.Sprint(i)), Code: CodeInvalid, Message: msg})
		}
	}
	return out
}

// labelList decodes a list of labels at path.
func (p *parser) labelList(v any, path string) []string {
	arr, ok := v.([]any)
	if !ok {
		p.add(path, CodeType, "must be a list of labels")
		return nil
	}
	if len(arr) == 0 {
		p.add(path, CodeEmpty, "must not be empty")
		return nil
	}
	if len(arr) > MaxSessionLabels {
		p.add(path, CodeInvalid, fmt.Sprintf("must have at most %d labels", MaxSessionLabels))
		return nil
	}
	out := make([]string, 0, len(arr))
	for i, item := range arr {
		ip := join(path, fmt.Sprint(i))
		s, ok := p.str(item, ip)
		if !ok {
			continue
		}
		if msg := checkLabel(s); msg != "" {
			p.add(ip, CodeInvalid, msg)
			continue
		}
		out = append(out, s)
	}
	return out
}

// sessionEffect decodes action.session.
func (p *parser) sessionEffect(v any, path string) *SessionEffect {
	obj, ok := p.object(v, path, "add_labels", "label_steps")
	if !ok {
		return nil
	}
	e := &SessionEffect{}
	if lv := obj["add_labels"]; lv != nil {
		e.AddLabels = p.labelList(lv, join(path, "add_labels"))
	}
	if sv := obj["label_steps"]; sv != nil {
		lp := join(path, "label_steps")
		arr, ok := sv.([]any)
		switch {
		case !ok:
			p.add(lp, CodeType, "must be a list of {label, steps}")
		case len(arr) == 0:
			p.add(lp, CodeEmpty, "must not be empty")
		case len(arr) > MaxLabelSteps:
			p.add(lp, CodeInvalid, fmt.Sprintf("must have at most %d entries", MaxLabelSteps))
		default:
			for i, item := range arr {
				ip := join(lp, fmt.Sprint(i))
				o, ok := p.object(item, ip, "label", "steps")
				if !ok {
					continue
				}
				var ls LabelStep
				if o["label"] == nil {
					p.add(join(ip, "label"), CodeRequired, "is required")
				} else if l, ok := p.str(o["label"], join(ip, "label")); ok {
					if msg := checkLabel(l); msg != "" {
						p.add(join(ip, "label"), CodeInvalid, msg)
					}
					ls.Label = l
				}
				if o["steps"] == nil {
					p.add(join(ip, "steps"), CodeRequired, "is required")
				} else {
					ls.Steps = p.strList(o["steps"], join(ip, "steps"), true, p.nonEmptyItem)
					if len(ls.Steps) > MaxLabelSteps*8 {
						p.add(join(ip, "steps"), CodeInvalid, fmt.Sprintf("must have at most %d names", MaxLabelSteps*8))
					}
				}
				e.LabelSteps = append(e.LabelSteps, ls)
			}
		}
	}
	if obj["add_labels"] == nil && obj["label_steps"] == nil {
		p.add(path, CodeEmpty, "must have add_labels or label_steps")
	}
	return e
}
