// Package promptattack provides prompt_attack, a built-in evaluator that scores text for prompt attacks
// with a classifier trained in this repository and shipped in the binary: direct prompt injection,
// jailbreaks, system-prompt extraction, and indirect injection (instructions addressed to the model
// inside data: a web page, an e-mail, a file, a tool result). It runs in process, without cgo or network.
//
// Importing the package registers the evaluator in evaluator.Default:
//
//	import _ "github.com/guardrail-control/guard/evaluator/promptattack"
//
// The model is a set of linear heads (logistic regression, one per class) over hashed character 3-5-grams
// and word uni- and bigrams, quantised to int8 (weights.bin.gz, embedded). Text is cut into blocks of
// about 256 bytes and scored in windows of four blocks sliding by one block; a class's score is its best
// window's. Every block's features are computed once, so the cost is linear in the length of the text.
//
// Config: classes (which heads to score; default the three prompt classes: indirect_injection judges tool
// results, where a request is out of place, is calibrated on them, and is asked for explicitly), and either operating_point (strict, balanced,
// sensitive: thresholds calibrated per class on ordinary text for a stated false-positive rate; default
// balanced) or threshold (0..1, compared with the confidence). The confidence of a class is
// sigmoid(logit - balanced threshold): 0.5 is exactly the balanced operating point, above is more sure.
// The result carries the best class, its confidence, every scored class's confidence and the byte span
// of the deciding window.
//
// The weights are trained by `go run ./evaluator/promptattack/train` from the corpora it names; see
// docs/evaluators.md and docs/efficacy.md.
package promptattack

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/guardrail-control/guard/evaluator"
	"github.com/guardrail-control/guard/evaluator/promptattack/internal/model"
)

// Name is the evaluator's registered name.
const Name = "prompt_attack"

// Version is the evaluator's version as GET /evaluators shows it: it changes with the weights.
const Version = "1.0.0"

// Classes are the heads of the model, in the order of the weights file.
var Classes = []string{"direct_injection", "jailbreak", "prompt_extraction", "indirect_injection"}

// OperatingPoints are the named operating points, from fewest to most matches. Each sets per class the
// score from which it matches, calibrated on ordinary text held out from training: strict for 0.05% of
// ordinary prompts and 0.1% of ordinary tool results, balanced 0.15% and 0.25%, sensitive 1% and 1%.
var OperatingPoints = []string{"strict", "balanced", "sensitive"}

// DefaultOperatingPoint is used when the config gives neither operating_point nor threshold.
const DefaultOperatingPoint = "balanced"

//go:embed weights.bin.gz
var weightsFile []byte

// maxWeights bounds the decompressed weights file.
const maxWeights = 64 << 20

var (
	loadOnce sync.Once
	loaded   *model.Model
	loadErr  error
)

// shipped returns the embedded model, decoded once.
func shipped() (*model.Model, error) {
	loadOnce.Do(func() {
		raw, err := model.Decompress(weightsFile, maxWeights)
		if err != nil {
			loadErr = fmt.Errorf("prompt_attack: weights: %w", err)
			return
		}
		loaded, loadErr = model.Unmarshal(raw)
		if loadErr == nil {
			for c, name := range Classes {
				if loaded.Classes[c] != name {
					loadErr = fmt.Errorf("prompt_attack: weights head %d is %q, want %q", c, loaded.Classes[c], name)
				}
			}
			for _, p := range OperatingPoints {
				if _, ok := loaded.Point(p); !ok {
					loadErr = fmt.Errorf("prompt_attack: weights have no operating point %q", p)
				}
			}
		}
	})
	return loaded, loadErr
}

const configSchema = `{
  "type": "object",
  "properties": {
    "classes": {"type": "array", "minItems": 1, "maxItems": 4, "uniqueItems": true,
      "items": {"enum": ["direct_injection", "jailbreak", "prompt_extraction", "indirect_injection"]},
      "description": "The attack classes to score; the evaluator matches when any of them reaches its threshold. Default: direct_injection, jailbreak, prompt_extraction (indirect_injection is calibrated on tool results and is asked for explicitly there)."},
    "operating_point": {"enum": ["strict", "balanced", "sensitive"], "default": "balanced",
      "description": "Per-class thresholds calibrated on ordinary text: strict (0.05% of ordinary prompts and 0.1% of ordinary tool results match), balanced (0.15% and 0.25%), sensitive (1%)."},
    "threshold": {"type": "number", "minimum": 0, "maximum": 1,
      "description": "Instead of an operating point: match when a class's confidence is at least this (0.5 is the balanced point)."}
  },
  "additionalProperties": false
}`

func init() { evaluator.Register(Factory()) }

// Factory returns the prompt_attack factory, for registering into a registry other than
// evaluator.Default.
func Factory() evaluator.Factory {
	return evaluator.Factory{
		Name: Name,
		Description: "Scores text with a built-in prompt-attack classifier (direct injection, jailbreak, system-prompt " +
			"extraction, instructions hidden in data) and matches at a calibrated operating point or a confidence threshold.",
		Version:      Version,
		ConfigSchema: json.RawMessage(configSchema),
		New:          build,
	}
}

// Evaluator is a configured prompt_attack evaluator. It is safe for concurrent use.
type Evaluator struct {
	m       *model.Model
	classes []int            // heads scored, ascending
	cut     [model.K]float64 // logit from which each head matches
	center  [model.K]float64 // logit of confidence 0.5 (the balanced point)
	point   string           // operating point name, "" when a threshold was given
	conf    float64          // the threshold given, or 0
	pool    *sync.Pool       // of *model.Extractor
	names   [model.K]string
}

var extractors = &sync.Pool{New: func() any { return new(model.Extractor) }}

func build(config map[string]any, _ evaluator.Options) (evaluator.Evaluator, error) {
	m, err := shipped()
	if err != nil {
		return nil, err
	}
	e := &Evaluator{m: m, pool: extractors}
	copy(e.names[:], Classes)
	bal, _ := m.Point("balanced")
	e.center = bal.Logit
	if raw, ok := config["classes"].([]any); ok {
		for _, v := range raw {
			s, _ := v.(string)
			for c, name := range Classes {
				if name == s {
					e.classes = append(e.classes, c)
				}
			}
		}
		sort.Ints(e.classes)
	} else {
		e.classes = []int{0, 1, 2} // the prompt classes; indirect_injection is asked for on tool results
	}
	if t, ok := number(config["threshold"]); ok {
		if _, both := config["operating_point"]; both {
			return nil, &evaluator.ConfigError{Problems: []evaluator.FieldError{{Field: "threshold", Code: "conflict",
				Message: "give either threshold or operating_point, not both"}}}
		}
		e.conf = t
		for c := range model.K {
			e.cut[c] = e.center[c] + logit(t)
		}
		return e, nil
	}
	e.point = DefaultOperatingPoint
	if p, ok := config["operating_point"].(string); ok {
		e.point = p
	}
	pt, ok := m.Point(e.point)
	if !ok {
		return nil, &evaluator.ConfigError{Problems: []evaluator.FieldError{{Field: "operating_point", Code: "enum",
			Message: "unknown operating point " + e.point}}}
	}
	e.cut = pt.Logit
	return e, nil
}

// number reads a config number (float64, or json.Number from a decoder that keeps numbers).
func number(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	}
	return 0, false
}

// logit is the inverse of the sigmoid, with 0 and 1 mapped to -Inf and +Inf.
func logit(p float64) float64 {
	switch {
	case p <= 0:
		return math.Inf(-1)
	case p >= 1:
		return math.Inf(1)
	}
	return math.Log(p / (1 - p))
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

// Evaluate scores the selected text (a string as it is; any other value as its JSON text with escapes
// decoded in place). Null data and blank text never match.
func (e *Evaluator) Evaluate(ctx context.Context, d *evaluator.Data) (evaluator.Result, error) {
	if d == nil || d.IsNull() {
		return evaluator.Result{Confidence: 1}, nil
	}
	text := evaluator.ScanText(d)
	if strings.TrimSpace(text) == "" {
		return evaluator.Result{Confidence: 1}, nil
	}
	ex := e.pool.Get().(*model.Extractor)
	best, ok := e.m.Score(text, ex, func() bool { return ctx.Err() != nil })
	e.pool.Put(ex)
	if !ok {
		return evaluator.Result{}, ctx.Err()
	}
	scores := make(map[string]any, len(e.classes))
	// The class reported is the most confident of those that match, or the most confident of all.
	top, topConf, matched := -1, -1.0, false
	for _, c := range e.classes {
		l := best[c].Logit[c]
		conf := sigmoid(l - e.center[c])
		scores[e.names[c]] = round4(conf)
		hit := l >= e.cut[c]
		if (hit && !matched) || (hit == matched && conf > topConf) {
			top, topConf, matched = c, conf, matched || hit
		}
	}
	meta := map[string]any{
		"class":      e.names[top],
		"score":      round4(topConf),
		"scores":     scores,
		"window":     []int{best[top].Start, best[top].End},
		"model":      Version,
		"thresholds": e.thresholdEcho(),
	}
	res := evaluator.Result{Matched: matched, Confidence: topConf, Metadata: meta}
	if matched {
		res.Message = fmt.Sprintf("%s %.3f (prompt_attack %s)", e.names[top], topConf, e.how())
	}
	return res, nil
}

// how names the decision rule for messages.
func (e *Evaluator) how() string {
	if e.point != "" {
		return "operating point " + e.point
	}
	return fmt.Sprintf("threshold %g", e.conf)
}

// thresholdEcho is the confidence from which each scored class matches.
func (e *Evaluator) thresholdEcho() map[string]any {
	out := make(map[string]any, len(e.classes))
	for _, c := range e.classes {
		out[e.names[c]] = round4(sigmoid(e.cut[c] - e.center[c]))
	}
	return out
}

func round4(f float64) float64 { return math.Round(f*1e4) / 1e4 }
