package evaluator

import (
	"context"
	"errors"
	"fmt"
	"regexp/syntax"
	"time"

	"github.com/dlclark/regexp2"
	regexp2syntax "github.com/dlclark/regexp2/syntax"
)

// Names of the regular expression engines a Regex evaluator may use (see Regex.Engine).
const (
	EngineRE2     = "re2"     // Go's regexp package: linear time
	EngineRegexp2 = "regexp2" // github.com/dlclark/regexp2: backtracking, under a match timeout
)

// MaxPatternLength is the longest regex pattern accepted, in characters: room for a detector's phrase families
// (a long alternation, which the branch filter runs branch by branch).
const MaxPatternLength = 16384

// ErrMatchTimeout is returned (wrapped) when a backtracking pattern runs out of time.
var ErrMatchTimeout = errors.New("regex match timed out")

const regexSchema = `{
  "type": "object",
  "properties": {
    "pattern": {
      "type": "string", "minLength": 1, "maxLength": 16384,
      "description": "Regular expression searched (unanchored) in the selected text. RE2 syntax runs in linear time; look-around and back-references run on a backtracking engine under timeout_ms."
    },
    "flags": {
      "type": "array",
      "items": {"type": "string", "enum": ["IGNORECASE", "I", "MULTILINE", "M", "DOTALL", "S"]},
      "description": "IGNORECASE/I: case-insensitive; MULTILINE/M: ^ and $ match at line breaks; DOTALL/S: . matches a newline."
    },
    "normalize": {
      "type": "boolean", "default": false,
      "description": "Also search the text as decoded and folded (URL, HTML, JSON and backslash escapes, up to 3 nested layers; full-width, compatibility and homoglyph characters; invisible characters dropped): the pattern matches when it matches either. Spans found in the decoded text map back to the original for redaction."
    }
  },
  "required": ["pattern"],
  "additionalProperties": false
}`

// RegexFactory describes the built-in regex evaluator.
func RegexFactory() Factory {
	return Factory{
		Name:         "regex",
		Description:  "Matches when a regular expression is found anywhere in the selected text.",
		Version:      "1.0.0",
		ConfigSchema: []byte(regexSchema),
		New:          newRegexFromConfig,
	}
}

// Regex is the compiled regex evaluator. It is safe for concurrent use.
type Regex struct {
	re2      *lazyRegexp
	bt       *backtracker
	timeout  time.Duration
	literals []string
	folds    bool
	prefOK   bool
	runSet   ByteSet
	runMin   int
	runOK    bool
	// normalize: also search the normalised text (regex_normalize.go).
	normalize bool
	// branches: the top-level alternation split with a literal filter per branch (regex_branches.go).
	branches *branchFilter
}

// regexFlags are the parsed "flags" of a config.
type regexFlags struct {
	ignoreCase, multiline, dotAll bool
}

func (f regexFlags) goPrefix() string {
	p := ""
	if f.ignoreCase {
		p += "i"
	}
	if f.multiline {
		p += "m"
	}
	if f.dotAll {
		p += "s"
	}
	if p == "" {
		return ""
	}
	return "(?" + p + ")"
}

func (f regexFlags) regexp2Options() regexp2.RegexOptions {
	opt := regexp2.RegexOptions(regexp2.RE2)
	if f.ignoreCase {
		opt |= regexp2.IgnoreCase
	}
	if f.multiline {
		opt |= regexp2.Multiline
	}
	if f.dotAll {
		opt |= regexp2.Singleline
	}
	return opt
}

func parseRegexFlags(v any) (regexFlags, []FieldError) {
	var f regexFlags
	list, _ := v.([]any)
	var problems []FieldError
	for i, item := range list {
		s, _ := item.(string)
		switch s {
		case "IGNORECASE", "I":
			f.ignoreCase = true
		case "MULTILINE", "M":
			f.multiline = true
		case "DOTALL", "S":
			f.dotAll = true
		default:
			problems = append(problems, FieldError{Field: fmt.Sprintf("flags.%d", i), Code: "enum",
				Message: "must be one of IGNORECASE, I, MULTILINE, M, DOTALL, S"})
		}
	}
	return f, problems
}

func newRegexFromConfig(config map[string]any, opts Options) (Evaluator, error) {
	pattern, _ := config["pattern"].(string)
	flags, problems := parseRegexFlags(config["flags"])
	if len(problems) > 0 {
		return nil, &ConfigError{Problems: problems}
	}
	r, err := NewRegex(pattern, flags.ignoreCase, flags.multiline, flags.dotAll, opts.Timeout)
	if err != nil {
		return nil, err
	}
	r.normalize, _ = config["normalize"].(bool)
	return r, nil
}

// NewRegex compiles pattern with Go's regexp when RE2 accepts it, and with regexp2 (matches bounded by
// timeout) when RE2 rejects it only for lack of backtracking features: look-around, back-references,
// atomic groups, possessive quantifiers, conditionals. Any other syntax error is a FieldError on
// "pattern" with code invalid_regex; its message never contains the pattern.
func NewRegex(pattern string, ignoreCase, multiline, dotAll bool, timeout time.Duration) (*Regex, error) {
	if pattern == "" {
		return nil, FieldError{Field: "pattern", Code: "required", Message: "must not be empty"}
	}
	if len([]rune(pattern)) > MaxPatternLength {
		return nil, FieldError{Field: "pattern", Code: "maxLength", Message: fmt.Sprintf("must have at most %d characters", MaxPatternLength)}
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	flags := regexFlags{ignoreCase: ignoreCase, multiline: multiline, dotAll: dotAll}
	expr := flags.goPrefix() + pattern
	// regexp.Compile fails only where syntax.Parse does (with the same flags): one parse tells whether
	// RE2 takes the pattern, and the compiled program is made on first use (lazyRegexp). A detector's
	// pattern is a long alternation that the branch filter runs branch by branch, so the whole program is
	// rarely needed, and compiling it took most of a save.
	if r, ok := compiledRegexes.get(expr); ok {
		r.timeout = timeout
		return r, nil
	}
	parsed, err := syntax.Parse(expr, syntax.Perl)
	if err == nil {
		r := &Regex{re2: newLazyRegexp(expr), timeout: timeout}
		parsed = parsed.Simplify()
		r.literals, r.folds, r.prefOK = requiredLiterals(parsed)
		r.runSet, r.runMin, r.runOK = requiredRun(parsed)
		r.branches = newBranchFilter(pattern, flags.goPrefix())
		compiledRegexes.put(expr, r)
		return r, nil
	}
	var se *syntax.Error
	if !errors.As(err, &se) {
		return nil, FieldError{Field: "pattern", Code: "invalid_regex", Message: "is not a valid regular expression"}
	}
	if !needsBacktracking(se.Code) {
		return nil, FieldError{Field: "pattern", Code: "invalid_regex", Message: "is not a valid regular expression: " + se.Code.String()}
	}
	re2x, err := regexp2.Compile(pattern, flags.regexp2Options())
	if err != nil {
		msg := "is not a valid regular expression"
		var pe *regexp2syntax.Error
		if errors.As(err, &pe) {
			msg += ": " + regexp2Message(pe)
		}
		return nil, FieldError{Field: "pattern", Code: "invalid_regex", Message: msg}
	}
	return &Regex{bt: newBacktracker(pattern, flags.regexp2Options(), re2x), timeout: timeout}, nil
}

// regexp2Timeout is the MatchTimeout that makes a regexp2 match give up close to timeout: regexp2
// checks its deadline against a clock that ticks every DefaultClockPeriod and adds one period to every
// deadline, so that period is taken off (for short timeouts, half of the timeout).
func regexp2Timeout(timeout time.Duration) time.Duration {
	if timeout > 2*regexp2.DefaultClockPeriod {
		return timeout - regexp2.DefaultClockPeriod
	}
	return max(timeout/2, time.Millisecond)
}

// needsBacktracking reports whether an RE2 parse error may come from a feature only a backtracking engine
// has: (?=, (?!, (?<=, (?<!, (?>, (?( give invalid Perl operators; \1 and \k<name> invalid escapes;
// (?P=name) an invalid named capture. Possessive quantifiers (a*+) also fail with invalid nested
// repetition, but regexp2 rejects them too, so they end up as invalid_regex.
func needsBacktracking(code syntax.ErrorCode) bool {
	switch code {
	case syntax.ErrInvalidPerlOp, syntax.ErrInvalidEscape, syntax.ErrInvalidRepeatOp, syntax.ErrInvalidNamedCapture:
		return true
	}
	return false
}

// regexp2Message is the kind of a regexp2 parse error, without any part of the pattern: regexp2's own
// message quotes the pattern, and some kinds name a group, a property or an escape taken from it, which
// would echo client input in an error body.
func regexp2Message(e *regexp2syntax.Error) string {
	if msg, ok := regexp2Kinds[e.Code]; ok {
		return msg
	}
	return "unsupported construct"
}

// regexp2Kinds maps regexp2's error codes to messages with no text from the pattern.
var regexp2Kinds = map[regexp2syntax.ErrorCode]string{
	regexp2syntax.ErrUnterminatedComment:        "unterminated comment",
	regexp2syntax.ErrInvalidCharRange:           "invalid character class range",
	regexp2syntax.ErrInvalidRepeatSize:          "invalid repeat count",
	regexp2syntax.ErrInvalidUTF8:                "invalid UTF-8",
	regexp2syntax.ErrCaptureGroupOutOfRange:     "capture group number out of range",
	regexp2syntax.ErrUnexpectedParen:            "unexpected closing parenthesis",
	regexp2syntax.ErrMissingParen:               "missing closing parenthesis",
	regexp2syntax.ErrMissingBrace:               "missing closing brace",
	regexp2syntax.ErrInvalidRepeatOp:            "invalid nested repetition operator",
	regexp2syntax.ErrMissingRepeatArgument:      "missing argument to repetition operator",
	regexp2syntax.ErrConditionalExpression:      "invalid conditional expression",
	regexp2syntax.ErrTooManyAlternates:          "too many alternatives in a conditional",
	regexp2syntax.ErrUnrecognizedGrouping:       "unrecognized grouping construct",
	regexp2syntax.ErrInvalidGroupName:           "invalid group name",
	regexp2syntax.ErrCapNumNotZero:              "capture group number cannot be zero",
	regexp2syntax.ErrUndefinedBackRef:           "back-reference to an undefined group number",
	regexp2syntax.ErrUndefinedNameRef:           "back-reference to an undefined group name",
	regexp2syntax.ErrAlternationCantCapture:     "conditions of an alternation cannot capture",
	regexp2syntax.ErrAlternationCantHaveComment: "conditions of an alternation cannot be comments",
	regexp2syntax.ErrMalformedReference:         "malformed conditional reference",
	regexp2syntax.ErrUndefinedReference:         "conditional reference to an undefined group",
	regexp2syntax.ErrIllegalEndEscape:           "backslash at the end of the pattern",
	regexp2syntax.ErrMalformedSlashP:            "malformed \\p{...} escape",
	regexp2syntax.ErrIncompleteSlashP:           "incomplete \\p{...} escape",
	regexp2syntax.ErrUnknownSlashP:              "unknown Unicode category, script or property in a \\p{...} escape",
	regexp2syntax.ErrUnrecognizedEscape:         "unrecognized escape sequence",
	regexp2syntax.ErrMissingControl:             "missing control character",
	regexp2syntax.ErrUnrecognizedControl:        "unrecognized control character",
	regexp2syntax.ErrTooFewHex:                  "too few hexadecimal digits",
	regexp2syntax.ErrInvalidHex:                 "hexadecimal value above 0x10FFFF",
	regexp2syntax.ErrMalformedNameRef:           "malformed named back-reference",
	regexp2syntax.ErrBadClassInCharRange:        "a character class cannot bound a character range",
	regexp2syntax.ErrUnterminatedBracket:        "unterminated character class",
	regexp2syntax.ErrSubtractionMustBeLast:      "a class subtraction must be the last element of a character class",
	regexp2syntax.ErrReversedCharRange:          "character range in reverse order",
}

// Engine reports which engine compiled the pattern: EngineRE2 or EngineRegexp2.
func (r *Regex) Engine() string {
	if r.bt == nil {
		return EngineRE2
	}
	return EngineRegexp2
}

// Evaluate matches the pattern anywhere in d.Text. Null data never matches. On RE2 a non-match does not
// allocate. On regexp2 the match runs under the shorter of the timeout and the time left before ctx's
// deadline: a match that runs past the timeout returns an error wrapping ErrMatchTimeout, one stopped by
// ctx returns ctx's error (context.DeadlineExceeded when the deadline came first), and no match starts
// once ctx is done.
func (r *Regex) Evaluate(ctx context.Context, d *Data) (Result, error) {
	if d == nil || d.IsNull() {
		return Result{Confidence: 1}, nil
	}
	if r.normalize {
		return r.evaluateNormalized(ctx, d)
	}
	return r.evaluateText(ctx, d)
}

// evaluateText is Evaluate on d.Text as it is.
func (r *Regex) evaluateText(ctx context.Context, d *Data) (Result, error) {
	if r.re2 != nil {
		if !r.matchRE2(d.Text) {
			return Result{Confidence: 1}, nil
		}
		return Result{Matched: true, Confidence: 1, Message: "pattern matched", Metadata: map[string]any{"engine": EngineRE2}}, nil
	}
	// A backtracking match cannot be interrupted, only bounded: it gets the shorter of timeout_ms and the
	// time left before ctx's deadline, and none starts once ctx is done.
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	timeout, byDeadline := r.timeout, false
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl); left < timeout {
			timeout, byDeadline = max(left, time.Millisecond), true
		}
	}
	ok, err := r.bt.match(d.Text, regexp2Timeout(timeout))
	if err != nil {
		if errors.Is(err, errRecompile) {
			return Result{}, err
		}
		if cerr := ctx.Err(); cerr != nil {
			return Result{}, cerr
		}
		if byDeadline {
			return Result{}, context.DeadlineExceeded
		}
		// regexp2's own error quotes the input: never pass it on.
		return Result{}, fmt.Errorf("%w after %v", ErrMatchTimeout, r.timeout)
	}
	if !ok {
		return Result{Confidence: 1}, nil
	}
	return Result{Matched: true, Confidence: 1, Message: "pattern matched", Metadata: map[string]any{"engine": EngineRegexp2}}, nil
}

// matchRE2 is MatchString of the RE2 pattern, through the branch filter when it has one.
func (r *Regex) matchRE2(text string) bool {
	if r.branches != nil {
		if m, ok := r.branches.match(text); ok {
			return m
		}
	}
	return r.re2.get().MatchString(text)
}

// RequiredLiterals implements Prefilter. Patterns compiled by regexp2 have no prefilter.
func (r *Regex) RequiredLiterals() (literals []string, foldsCase bool, ok bool) {
	if !r.prefOK || r.normalize { // with normalize, a literal may appear only once the text is decoded
		return nil, false, false
	}
	return r.literals, r.folds, true
}

// RequiredRun implements RunPrefilter. Patterns compiled by regexp2 have no run requirement.
func (r *Regex) RequiredRun() (set ByteSet, minLen int, ok bool) {
	if !r.runOK || r.normalize {
		return ByteSet{}, 0, false
	}
	return r.runSet, r.runMin, true
}
