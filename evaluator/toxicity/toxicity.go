// Package toxicity provides ext.toxicity, an external evaluator that scores text through an
// OpenAI-compatible moderation endpoint (POST {"input": text} → {"results": [{"category_scores": {...}}]}).
//
// Importing the package registers the evaluator in evaluator.Default:
//
//	import _ "github.com/guardrail-control/guard/evaluator/toxicity"
//
// It is available (listed by GET /evaluators and usable in controls) only while an API key is
// configured: EXT_API_KEY in the environment, read at each check, or the settings given to Configure.
// EXT_API_URL overrides the endpoint (DefaultURL) and EXT_API_MODEL, when set, is sent as "model".
// NewFactory builds a factory with fixed settings for a registry of one's own (tests, embedders).
//
// Config: metric (input_toxicity or output_toxicity), operator (gt, gte, lt, lte, eq), target_value
// (0..1), and optionally categories (see DefaultCategories). The score is the highest score among the
// categories; the evaluator matches when score <operator> target_value. The selector decides which text
// is scored; metric names what is measured (use input_toxicity with an input.* selector at the pre stage,
// output_toxicity with output.* at the post stage) and is reported in the result's metadata.
package toxicity

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
const Name = "ext.toxicity"

// Version is the evaluator's version as GET /evaluators shows it.
const Version = "1.0.0"

// The metrics a config may name.
const (
	MetricInput  = "input_toxicity"
	MetricOutput = "output_toxicity"
)

// eqTolerance is how close a score must be to target_value for operator eq.
const eqTolerance = 1e-9

// configSchema is the JSON Schema of the evaluator's own keys (on_error and timeout_ms are added by the
// registry).
const configSchema = `{
  "type": "object",
  "properties": {
    "metric": {"type": "string", "enum": ["input_toxicity", "output_toxicity"],
      "description": "What is measured: the toxicity of the step input (pre stage) or output (post stage). The selector picks the text; the metric is reported in the result metadata."},
    "operator": {"type": "string", "enum": ["gt", "gte", "lt", "lte", "eq"],
      "description": "How the score compares with target_value for a match."},
    "target_value": {"type": "number", "minimum": 0, "maximum": 1,
      "description": "Threshold between 0 and 1."},
    "categories": {"type": "array", "minItems": 1, "maxItems": 32, "uniqueItems": true,
      "items": {"type": "string", "minLength": 1, "maxLength": 64},
      "description": "Moderation categories whose highest score is the toxicity score. Default: harassment, harassment/threatening, hate, hate/threatening."}
  },
  "required": ["metric", "operator", "target_value"],
  "additionalProperties": false
}`

func init() { evaluator.Register(newFactory(currentSettings)) }

// NewFactory returns an ext.toxicity factory that always uses s (available when s.APIKey is not
// blank), for registering into a registry other than evaluator.Default.
func NewFactory(s Settings) evaluator.Factory {
	return newFactory(func() Settings { return s })
}

func newFactory(get func() Settings) evaluator.Factory {
	return evaluator.Factory{
		Name: Name,
		Description: "Scores the selected text with an OpenAI-compatible moderation service and matches when " +
			"the highest toxicity score (harassment, hate and their threatening forms by default) compares with " +
			"target_value as operator says. Needs EXT_API_KEY; EXT_API_URL sets the endpoint.",
		Version:        Version,
		ConfigSchema:   json.RawMessage(configSchema),
		RequiresAPIKey: true,
		External:       true,
		Available:      func() bool { return strings.TrimSpace(get().APIKey) != "" },
		New: func(config map[string]any, opts evaluator.Options) (evaluator.Evaluator, error) {
			return build(get(), config, opts)
		},
	}
}

// Evaluator is a configured ext.toxicity evaluator. It is safe for concurrent use.
type Evaluator struct {
	metric     string
	operator   string
	target     float64
	categories []string
	timeout    time.Duration
	client     client
}

// build checks config and settings and returns a ready evaluator.
func build(s Settings, config map[string]any, opts evaluator.Options) (*Evaluator, error) {
	s = s.withDefaults()
	if s.APIKey == "" {
		return nil, fmt.Errorf("%s is not configured: set %s", Name, EnvAPIKey)
	}
	if err := s.Check(); err != nil {
		return nil, fmt.Errorf("%s: the moderation URL is not an http(s) URL: check %s", Name, EnvAPIURL)
	}
	e := &Evaluator{categories: DefaultCategories, timeout: opts.Timeout, client: client{s: s, svc: callerFor(s)}}
	var problems []evaluator.FieldError
	bad := func(field, code, msg string) {
		problems = append(problems, evaluator.FieldError{Field: field, Code: code, Message: msg})
	}
	for _, key := range []string{"metric", "operator", "target_value"} {
		if _, ok := config[key]; !ok {
			bad(key, "required", "is required")
		}
	}
	for k, v := range config {
		switch k {
		case "metric":
			m, _ := v.(string)
			if m != MetricInput && m != MetricOutput {
				bad(k, "enum", "must be one of input_toxicity, output_toxicity")
			}
			e.metric = m
		case "operator":
			op, _ := v.(string)
			if _, ok := operatorSymbols[op]; !ok {
				bad(k, "enum", "must be one of gt, gte, lt, lte, eq")
			}
			e.operator = op
		case "target_value":
			f, ok := evaluator.Number(v)
			if !ok || f < 0 || f > 1 {
				bad(k, "range", "must be a number between 0 and 1")
			}
			e.target = f
		case "categories":
			cats, ok := categoryList(v)
			if !ok {
				bad(k, "type", "must be a non-empty list of distinct category names")
			}
			e.categories = cats
		default:
			bad(k, "unknown_field", "is not a known field")
		}
	}
	if len(problems) > 0 {
		return nil, &evaluator.ConfigError{Problems: problems}
	}
	return e, nil
}

func categoryList(v any) ([]string, bool) {
	var items []string
	switch l := v.(type) {
	case []string:
		items = l
	case []any:
		for _, it := range l {
			s, ok := it.(string)
			if !ok {
				return nil, false
			}
			items = append(items, s)
		}
	default:
		return nil, false
	}
	seen := make(map[string]bool, len(items))
	for _, s := range items {
		if strings.TrimSpace(s) == "" || seen[s] {
			return nil, false
		}
		seen[s] = true
	}
	return items, len(items) > 0
}

// operatorSymbols maps operators to the symbols used in messages.
var operatorSymbols = map[string]string{"gt": ">", "gte": ">=", "lt": "<", "lte": "<=", "eq": "=="}

// compare applies op to score and target.
func compare(op string, score, target float64) bool {
	switch op {
	case "gt":
		return score > target
	case "gte":
		return score >= target
	case "lt":
		return score < target
	case "lte":
		return score <= target
	case "eq":
		return math.Abs(score-target) <= eqTolerance
	}
	return false
}

// Evaluate scores the selected text. Null data and data with no text to score (blank, or a value
// with no string in it) never match and cause no request. The request runs under the evaluator's
// timeout (timeout_ms) as well as ctx's deadline, retries included.
func (e *Evaluator) Evaluate(ctx context.Context, d *evaluator.Data) (evaluator.Result, error) {
	if d == nil || d.IsNull() {
		return evaluator.Result{Confidence: 1}, nil
	}
	text := textOf(d.Value, d.Text)
	if strings.TrimSpace(text) == "" {
		return evaluator.Result{Confidence: 1}, nil
	}
	if e.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.timeout)
		defer cancel()
	}
	resp, err := e.client.moderate(ctx, text)
	if err != nil {
		return evaluator.Result{}, err
	}
	score, top, found := 0.0, "", false
	for _, r := range resp.Results {
		s, c, ok := maxScore(r.CategoryScores, e.categories)
		if ok && (!found || s > score) {
			score, top, found = s, c, true
		}
	}
	if !found {
		return evaluator.Result{}, e.client.svc.Failure(200, "the moderation response scores none of the categories "+strings.Join(e.categories, ", "))
	}
	if math.IsNaN(score) || score < 0 || score > 1 {
		return evaluator.Result{}, e.client.svc.Failure(200, "the moderation response has a score outside 0..1")
	}
	matched := compare(e.operator, score, e.target)
	meta := map[string]any{
		"metric":   e.metric,
		"score":    score,
		"category": top,
	}
	if resp.Model != "" {
		meta["model"] = resp.Model
	}
	res := evaluator.Result{Matched: matched, Confidence: 1, Metadata: meta}
	if matched {
		res.Message = fmt.Sprintf("%s %.3f (%s) %s %g", e.metric, score, top, operatorSymbols[e.operator], e.target)
	}
	return res, nil
}
