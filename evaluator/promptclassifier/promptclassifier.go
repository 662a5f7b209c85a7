// Package promptclassifier provides ext.prompt_injection, an external evaluator that asks a
// prompt-injection classifier the operator runs (a fine-tuned model such as a DeBERTa prompt-injection
// classifier behind a text-classification server) whether the selected text is an attack, so that teams
// with such a model can use it as a control condition beside guard's heuristics.
//
// Importing the package registers the evaluator in evaluator.Default:
//
//	import _ "github.com/guardrail-control/guard/evaluator/promptclassifier"
//
// It is available only while EXT_PROMPT_CLASSIFIER_URL is set (read at each check, or the settings given
// to Configure). The protocol is the text-classification one of Hugging Face's inference servers:
// POST {"inputs": text} answers [{"label": "INJECTION", "score": 0.98}, ...] (or that list inside a list,
// one per input). EXT_PROMPT_CLASSIFIER_API_KEY, when set, is sent as a bearer token.
//
// Config: threshold (0..1, default 0.5) and labels (the labels that mean an attack; default INJECTION,
// JAILBREAK, MALICIOUS, UNSAFE, LABEL_1, compared case-insensitively). The evaluator matches when the
// highest score among those labels reaches the threshold. Like every external evaluator it runs under
// timeout_ms and its control's on_error decides what a failure means.
package promptclassifier

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/guardrail-control/guard/evaluator"
)

// Name is the evaluator's registered name.
const Name = "ext.prompt_injection"

// Version is the evaluator's version as GET /evaluators shows it.
const Version = "1.0.0"

// DefaultThreshold is the score from which an attack label matches when the config gives none.
const DefaultThreshold = 0.5

// DefaultLabels are the labels that mean an attack when the config gives none: those of the common
// open prompt-injection and jailbreak classifiers, and LABEL_1 of a binary model without label names.
var DefaultLabels = []string{"INJECTION", "JAILBREAK", "MALICIOUS", "UNSAFE", "LABEL_1"}

const configSchema = `{
  "type": "object",
  "properties": {
    "threshold": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5,
      "description": "The evaluator matches when the highest score of an attack label is at least this."},
    "labels": {"type": "array", "minItems": 1, "maxItems": 16, "uniqueItems": true,
      "items": {"type": "string", "minLength": 1, "maxLength": 64},
      "description": "Labels of the classifier that mean an attack, compared case-insensitively. Default: INJECTION, JAILBREAK, MALICIOUS, UNSAFE, LABEL_1."}
  },
  "additionalProperties": false
}`

func init() { evaluator.Register(newFactory(currentSettings)) }

// NewFactory returns an ext.prompt_injection factory that always uses s (available when s.URL is not
// blank), for registering into a registry other than evaluator.Default.
func NewFactory(s Settings) evaluator.Factory {
	return newFactory(func() Settings { return s })
}

func newFactory(get func() Settings) evaluator.Factory {
	return evaluator.Factory{
		Name: Name,
		Description: "Asks a prompt-injection classifier the operator runs (Hugging Face text-classification protocol) " +
			"and matches when an attack label scores at least threshold. Needs EXT_PROMPT_CLASSIFIER_URL.",
		Version:      Version,
		ConfigSchema: json.RawMessage(configSchema),
		External:     true,
		Available:    func() bool { return strings.TrimSpace(get().URL) != "" },
		New: func(config map[string]any, opts evaluator.Options) (evaluator.Evaluator, error) {
			return build(get(), config, opts)
		},
	}
}

// Evaluator is a configured ext.prompt_injection evaluator. It is safe for concurrent use.
type Evaluator struct {
	threshold float64
	labels    []string // upper case
	timeout   time.Duration
	client    client
}

func build(s Settings, config map[string]any, opts evaluator.Options) (*Evaluator, error) {
	s = s.withDefaults()
	if s.URL == "" {
		return nil, fmt.Errorf("%s is not configured: set %s", Name, EnvURL)
	}
	if err := s.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	e := &Evaluator{threshold: DefaultThreshold, timeout: opts.Timeout, client: client{s: s, svc: callerFor(s)}}
	var problems []evaluator.FieldError
	bad := func(field, code, msg string) {
		problems = append(problems, evaluator.FieldError{Field: field, Code: code, Message: msg})
	}
	labels := DefaultLabels
	for k, v := range config {
		switch k {
		case "threshold":
			f, ok := evaluator.Number(v)
			if !ok || f < 0 || f > 1 || math.IsNaN(f) {
				bad(k, "range", "must be a number between 0 and 1")
			}
			e.threshold = f
		case "labels":
			l, ok := labelList(v)
			if !ok {
				bad(k, "type", "must be a non-empty list of distinct label names")
			}
			labels = l
		default:
			bad(k, "unknown_field", "is not a known field")
		}
	}
	if len(problems) > 0 {
		return nil, &evaluator.ConfigError{Problems: problems}
	}
	for _, l := range labels {
		e.labels = append(e.labels, strings.ToUpper(l))
	}
	return e, nil
}

func labelList(v any) ([]string, bool) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, false
	}
	seen := map[string]bool{}
	var out []string
	for _, it := range list {
		s, ok := it.(string)
		if !ok || strings.TrimSpace(s) == "" || seen[strings.ToUpper(s)] {
			return nil, false
		}
		seen[strings.ToUpper(s)] = true
		out = append(out, s)
	}
	return out, true
}

// Evaluate asks the classifier about the selected text. Null data and blank text never match and cause no
// request. The request runs under timeout_ms as well as ctx's deadline, retries included.
func (e *Evaluator) Evaluate(ctx context.Context, d *evaluator.Data) (evaluator.Result, error) {
	if d == nil || d.IsNull() || strings.TrimSpace(d.Text) == "" {
		return evaluator.Result{Confidence: 1}, nil
	}
	if e.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.timeout)
		defer cancel()
	}
	preds, err := e.client.classify(ctx, d.Text)
	if err != nil {
		return evaluator.Result{}, err
	}
	score, label, top, topScore := 0.0, "", "", -1.0
	for _, p := range preds {
		if math.IsNaN(p.Score) || p.Score < 0 || p.Score > 1 {
			return evaluator.Result{}, e.client.svc.Failure(200, "the classifier answered a score outside 0..1")
		}
		if p.Score > topScore {
			top, topScore = p.Label, p.Score
		}
		for _, l := range e.labels {
			if strings.ToUpper(p.Label) == l && p.Score >= score {
				score, label = p.Score, p.Label
			}
		}
	}
	matched := label != "" && score >= e.threshold
	meta := map[string]any{"score": score, "top_label": top}
	if label != "" {
		meta["label"] = label
	}
	res := evaluator.Result{Matched: matched, Confidence: 1, Metadata: meta}
	if matched {
		res.Confidence = score
		res.Message = fmt.Sprintf("prompt classifier: %s %.3f >= %g", label, score, e.threshold)
	}
	return res, nil
}
