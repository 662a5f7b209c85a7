// Package evaluator defines what an evaluator is, how evaluators are registered, and the built-in regex and
// list evaluators. An evaluator package registers its Factory in init(); a program that imports it has it.
package evaluator

import (
	"context"
	"encoding/json"
	"math/bits"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Data is the value a selector picked from a step, handed to an evaluator.
type Data struct {
	// Value is the selected JSON value as decoded by encoding/json (string, float64, bool, nil,
	// []any, map[string]any), or nil when the path did not resolve.
	Value any
	// Text is the text form of Value: the string itself, or compact JSON with sorted keys for any other
	// non-null value. It is empty when Value is nil.
	Text string
}

// IsNull reports whether nothing was selected (null never matches a text evaluator).
func (d *Data) IsNull() bool { return d.Value == nil }

// Result is what one evaluator decided about one piece of data.
type Result struct {
	Matched    bool
	Confidence float64 // 0..1
	Message    string
	Metadata   map[string]any
}

// Evaluator checks selected data. Implementations must be safe for concurrent use and must return
// promptly when ctx is done. An error means the evaluator could not decide; the control's on_error
// setting says what that means.
type Evaluator interface {
	Evaluate(ctx context.Context, d *Data) (Result, error)
}

// Prefilter is implemented by evaluators that can name literals at least one of which must occur in the
// text (compared ASCII case-insensitively) for the evaluator to match a string value. The engine finds
// the literals of all controls in one pass over the input and skips evaluators whose literals are absent.
// ok is false when no such set exists. FoldsCase reports whether the evaluator matches letters
// case-insensitively (Unicode folding), which makes the filter unsafe on non-ASCII text.
type Prefilter interface {
	RequiredLiterals() (literals []string, foldsCase bool, ok bool)
}

// RunPrefilter is implemented by evaluators that can name a required run: every string value they match
// has a text with at least minLen consecutive bytes all in set. The engine measures the longest such run
// of the text (once per set and evaluation) and skips evaluators whose run is too short. ok is false
// when no useful requirement exists. A set always contains every byte >= 0x80, so a requirement stated
// over characters holds over the bytes of their UTF-8 encoding.
type RunPrefilter interface {
	RequiredRun() (set ByteSet, minLen int, ok bool)
}

// ByteSet is a set of byte values: bit b%64 of word b/64 is set when b is in the set.
type ByteSet [4]uint64

// Contains reports whether b is in the set.
func (s *ByteSet) Contains(b byte) bool { return s[b>>6]&(1<<(b&63)) != 0 }

// Add puts b in the set.
func (s *ByteSet) Add(b byte) { s[b>>6] |= 1 << (b & 63) }

// Len is the number of byte values in the set.
func (s *ByteSet) Len() int {
	return bits.OnesCount64(s[0]) + bits.OnesCount64(s[1]) + bits.OnesCount64(s[2]) + bits.OnesCount64(s[3])
}

// LongestRun returns the length of the longest run of consecutive bytes of text in the set, stopping
// early once a run of limit bytes is found (limit <= 0: no early stop).
func (s *ByteSet) LongestRun(text string, limit int) int {
	best, cur := 0, 0
	for i := 0; i < len(text); i++ {
		b := text[i]
		if s[b>>6]&(1<<(b&63)) == 0 {
			cur = 0
			continue
		}
		cur++
		if cur > best {
			best = cur
			if best == limit {
				return best
			}
		}
	}
	return best
}

// Options are the common settings every evaluator config may carry, parsed by the registry.
type Options struct {
	// Timeout is timeout_ms, or the default (1 s for built-ins, 10 s for external evaluators).
	Timeout time.Duration
}

// Factory describes an evaluator and builds configured instances of it.
type Factory struct {
	Name        string
	Description string
	Version     string
	// ConfigSchema is the JSON Schema (draft 2020-12) of the evaluator's own config keys. The common keys
	// on_error and timeout_ms are added by the registry and must not be declared here: Register replaces
	// ConfigSchema of the registered copy with the merged document (see SchemaJSON), which is what
	// GET /evaluators shows and what every config is validated against.
	ConfigSchema json.RawMessage
	// RequiresAPIKey is shown by GET /evaluators.
	RequiresAPIKey bool
	// External evaluators call out over the network: default timeout 10 s instead of 1 s, and the engine
	// runs them concurrently under a context deadline.
	External bool
	// Available reports whether the evaluator can be used now (for instance, an API key is configured).
	// Nil means always. An unavailable evaluator is not listed and cannot be built.
	Available func() bool
	// New builds an evaluator from a config that already passed ConfigSchema, without on_error and
	// timeout_ms. It returns FieldErrors for problems the schema cannot express.
	New func(config map[string]any, opts Options) (Evaluator, error)
	// Canonical, when set, returns a valid config in the one form a control stores: the same meaning,
	// with a setting that has two accepted names written under the evaluator's canonical one. It is
	// called after the config passed validation (on_error and timeout_ms included, which it must keep),
	// must not modify its argument, and must be idempotent. Nil means configs are stored as written.
	Canonical func(config map[string]any) map[string]any

	// compiled is the merged ConfigSchema, compiled once by Register.
	compiled *jsonschema.Schema
}

// FieldError is one problem in an evaluator config; Field is a dotted path relative to the config
// ("pattern", "values.2").
type FieldError struct {
	Field   string
	Code    string
	Message string
}

// Error implements the error interface.
func (e FieldError) Error() string { return e.Field + ": " + e.Message }

// ConfigError lists every problem found in an evaluator config.
type ConfigError struct {
	Problems []FieldError
}

// Error implements the error interface.
func (e *ConfigError) Error() string {
	if len(e.Problems) == 0 {
		return "invalid evaluator config"
	}
	return "invalid evaluator config: " + e.Problems[0].Error()
}
