package secrets

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// rulesJSON is the rule set, generated from the pinned gitleaks module's default rules (MIT, see
// LICENSE.gitleaks) by ./gitleaksgen (`go generate`): data, so that the scanner does not change with it and the
// gitleaks module never enters this module's dependencies.
//
//go:generate go run -C gitleaksgen .
//go:embed rules.json
var rulesJSON []byte

// ruleFile is the shape of rules.json.
type ruleFile struct {
	Source     string     `json:"source"`
	Module     string     `json:"module"`
	Version    string     `json:"version"`
	Allow      []string   `json:"allow"`       // regexes; a secret matching one is not reported
	AllowMatch []string   `json:"allow_match"` // regexes; a whole match containing one is not reported
	AllowLine  []string   `json:"allow_line"`  // regexes; a match on a line containing one is not reported
	Stopwords  []string   `json:"stopwords"`   // a secret containing one (case-insensitively) is not reported
	Rules      []ruleData `json:"rules"`
	Skipped    []string   `json:"skipped"` // gitleaks rules that need a file path, with the reason
}

// ruleData is one rule as written in rules.json: gitleaks' fields, plus the group guard assigns.
type ruleData struct {
	ID          string   `json:"id"`
	Group       string   `json:"group"`
	Description string   `json:"description"`
	Regex       string   `json:"regex"`
	Entropy     float64  `json:"entropy"`
	Keywords    []string `json:"keywords"`
	// SecretGroup selects the capture group holding the secret: 0 (default) the first non-empty group
	// or the whole match, -1 the whole match.
	SecretGroup int      `json:"secret_group"`
	Allow       []string `json:"allow"`
	AllowMatch  []string `json:"allow_match"`
	AllowLine   []string `json:"allow_line"`
	Stopwords   []string `json:"stopwords"`
}

// rule is a compiled rule.
type rule struct {
	id, group, description       string
	re                           *regexp.Regexp
	entropy                      float64
	keywords                     []string // lower case
	secretGroup                  int
	allow, allowMatch, allowLine []*regexp.Regexp
	stopwords                    stopSet
	// before and after bound how far a match can reach from one of its keywords (bytes): the regex runs on
	// that window around each keyword occurrence, not on the whole text.
	before, after int
	// start, when set, is what every match starts with (see anchor).
	start *anchor
	// assign marks gitleaks' "name = value" rules, whose keyword must be followed by an assignment.
	assign bool
	// run, for a regex with unbounded repetitions, bounds the window after a keyword by the text itself
	// (see runBound); spelled says the keyword is inside every match, so a window's bound starts from it.
	run     *runBound
	spelled bool
	// value, for an assign rule, is the shape its value must have after the operator.
	value *valueShape
	// guard marks guard's own rules (extra.go); gate and gateBoundary: see guardRule.
	guard        bool
	gate         []string
	gateBoundary bool
}

// generatedPrefix opens gitleaks' generated "name = value" rules: at most 50 name bytes before the keyword.
const generatedPrefix = `(?i)[\w.-]{0,50}?(?:`

// assignTemplate is the part of gitleaks' generated "name = value" rules that follows the keyword.
const assignTemplate = `(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)`

// ruleSet is the compiled rule file.
type ruleSet struct {
	rules                        []*rule
	allow, allowMatch, allowLine []*regexp.Regexp
	stopwords                    stopSet
	groups                       []string // sorted, distinct
	version                      string   // the gitleaks version the rules come from
}

// builtin is the compiled vendored rule set; loading it cannot fail at run time (a test checks it).
var builtin = mustLoad(rulesJSON)

func mustLoad(b []byte) *ruleSet {
	rs, err := loadRules(b)
	if err == nil {
		err = rs.addGuardRules()
	}
	if err != nil {
		panic("secrets: bad rules.json: " + err.Error())
	}
	return rs
}

func compileAll(patterns []string) ([]*regexp.Regexp, error) {
	out := make([]*regexp.Regexp, 0, len(patterns))
	for _, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, re)
	}
	return out, nil
}

func lower(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = strings.ToLower(s)
	}
	return out
}

// loadRules compiles a rule file.
func loadRules(b []byte) (*ruleSet, error) {
	var f ruleFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	rs := &ruleSet{stopwords: newStopSet(f.Stopwords), version: f.Version}
	var err error
	if rs.allow, err = compileAll(f.Allow); err != nil {
		return nil, err
	}
	if rs.allowMatch, err = compileAll(f.AllowMatch); err != nil {
		return nil, err
	}
	if rs.allowLine, err = compileAll(f.AllowLine); err != nil {
		return nil, err
	}
	seenGroup := map[string]bool{}
	seenID := map[string]bool{}
	for _, d := range f.Rules {
		if d.ID == "" || d.Group == "" || len(d.Keywords) == 0 || seenID[d.ID] {
			return nil, fmt.Errorf("rule %q: needs a unique id, a group and keywords", d.ID)
		}
		seenID[d.ID] = true
		r, err := compileRule(d)
		if err != nil {
			return nil, err
		}
		rs.rules = append(rs.rules, r)
		if !seenGroup[d.Group] {
			seenGroup[d.Group] = true
			rs.groups = append(rs.groups, d.Group)
		}
	}
	sort.Strings(rs.groups)
	return rs, nil
}

// compileRule compiles one rule of the file (or one of guard's own, see extra.go).
func compileRule(d ruleData) (*rule, error) {
	var err error
	r := &rule{id: d.ID, group: d.Group, description: d.Description, entropy: d.Entropy,
		keywords: lower(d.Keywords), secretGroup: d.SecretGroup, stopwords: newStopSet(d.Stopwords)}
	for _, kw := range r.keywords {
		if len(kw) < 2 {
			return nil, fmt.Errorf("rule %q: keyword %q is shorter than 2 bytes", d.ID, kw)
		}
	}
	// A keyword gates a rule; where it sits in the match decides the window. In a "name = value" rule
	// whose keywords are in the name (none is spelled, bar punctuation, in the value's pattern), an assignment must follow
	// the keyword; typeform's rule is of that shape but its keyword "tfp_" opens the value. Another
	// rule's keyword that the regex does not spell out (airtable's tokens start "pat", its keyword is
	// "airtable") may be anywhere near the match, as gitleaks only asks that it occur in the text: such
	// a rule's window reaches maxBefore bytes further on both sides.
	lowerRe := strings.ToLower(d.Regex)
	_, valuePart, isAssign := strings.Cut(lowerRe, strings.ToLower(assignTemplate))
	r.assign = isAssign
	spelled := true
	for _, kw := range r.keywords {
		r.assign = r.assign && !strings.Contains(valuePart, strings.TrimFunc(kw, isNotAlnum))
		spelled = spelled && strings.Contains(lowerRe, kw)
	}
	if r.re, err = regexp.Compile(d.Regex); err != nil {
		return nil, fmt.Errorf("rule %q: %w", d.ID, err)
	}
	if r.before, r.after, err = reach(d.Regex); err != nil {
		return nil, fmt.Errorf("rule %q: %w", d.ID, err)
	}
	if !r.assign && !spelled {
		// The match may lie up to maxBefore bytes away from the keyword, on either side.
		r.before, r.after = maxBefore, min(r.after+maxBefore, maxAfter)
	}
	r.spelled = spelled
	if rb, ok, err := newRunBound(d.Regex); err != nil {
		return nil, fmt.Errorf("rule %q: %w", d.ID, err)
	} else if ok {
		r.run = rb
	}
	if vp, ok := valuePartOf(d.Regex); ok && r.assign {
		fold := strings.HasPrefix(d.Regex, "(?i)")
		if vs, ok := newValueShape(vp, fold); ok {
			r.value = vs
		}
		if r.run != nil {
			// The window's bound starts at the operator: only the value part follows it (and up to 3
			// more operator bytes).
			if fold {
				vp = "(?i)" + vp
			}
			if rb, ok, err := newRunBound(vp); err == nil && ok {
				rb.bounded += 3
				r.run = rb
			}
		}
		if strings.HasPrefix(d.Regex, generatedPrefix) {
			// A generated rule's match starts at most 50 name bytes before its keyword.
			r.before = min(r.before, 50)
		}
	}
	if a, ok := anchorOf(d.Regex, r.keywords); ok {
		r.start = &a
	}
	if r.allow, err = compileAll(d.Allow); err != nil {
		return nil, fmt.Errorf("rule %q: %w", d.ID, err)
	}
	if r.allowMatch, err = compileAll(d.AllowMatch); err != nil {
		return nil, fmt.Errorf("rule %q: %w", d.ID, err)
	}
	if r.allowLine, err = compileAll(d.AllowLine); err != nil {
		return nil, fmt.Errorf("rule %q: %w", d.ID, err)
	}
	return r, nil
}

func isNotAlnum(c rune) bool { return !('a' <= c && c <= 'z' || '0' <= c && c <= '9') }

// ruleIDs lists the ids of the vendored rules, for the config schema.
func (rs *ruleSet) ruleIDs() []string {
	out := make([]string, 0, len(rs.rules))
	for _, r := range rs.rules {
		if !slices.Contains(out, r.id) { // a bare form shares its gitleaks rule's id
			out = append(out, r.id)
		}
	}
	return out
}
