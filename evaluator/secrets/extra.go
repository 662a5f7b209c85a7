package secrets

import (
	"fmt"
	"slices"
	"strings"
)

// guardRule is one of guard's own rules, beside gitleaks' (rules.json): a bare form of a gitleaks rule, or
// a rule gitleaks does not have.
type guardRule struct {
	ruleData
	// of names the gitleaks rule a bare form belongs to: it reports that rule's id, group and description,
	// and shares its allow lists and stop words, so that a config selecting or excluding the rule does the
	// same to its bare form.
	of string
	// gate, when set, is what the text at a keyword occurrence must start with, in exact case, for the rule
	// to run there (the keyword index compares case-insensitively); boundary asks for a word boundary before.
	gate     []string
	boundary bool
}

// guardRules: gitleaks' "name = value" rules find a value only after a key word naming the service
// (mailchimp, telegram, discord, ...). Where the value's own format is distinctive, guard also finds it bare,
// with no key word: a Mailchimp key ends in -us and a data-centre number, a Telegram bot token is a bot id,
// ":A" and 34 bytes, a Discord bot token is a base64 user id (which starts MT..OT), a 6-byte time and an
// HMAC; Slack's tokens of older layouts (shorter numeric parts) keep their xox prefix. Formats that are only
// a length of hex or base64 (Discord's API key is 64 hex digits, like any SHA-256) still need their key word.
// Credentials written into a URL (scheme://user:password@host) are secrets too, unless the password is a
// placeholder: the words password, passwd, secret and changeme, a mask (xxx, ***), a variable or template
// (${VAR}, <password>, {{password}}, %s); a short real-looking password (pass, hunter2) is reported.
var guardRules = []guardRule{
	{ruleData: ruleData{Regex: `\b([a-f0-9]{32}-us\d{1,2})\b`, Entropy: 3, Keywords: []string{"-us"}}, of: "mailchimp-api-key"},
	{ruleData: ruleData{Regex: `\b(\d{5,16}:A[a-zA-Z0-9_-]{34})(?:[^a-zA-Z0-9_-]|$)`, Entropy: 3.5, Keywords: []string{":a"}},
		of: "telegram-bot-api-token", gate: []string{":A"}},
	{ruleData: ruleData{Regex: `\b((?:MT|Mj|Mz|ND|NT|Nj|Nz|OD|OT)[A-Za-z0-9_-]{21,24}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38})\b`,
		Entropy: 3.5, Keywords: []string{"mt", "mj", "mz", "nd", "nt", "nj", "nz", "od", "ot"}},
		of: "discord-api-token", gate: []string{"MT", "Mj", "Mz", "ND", "NT", "Nj", "Nz", "OD", "OT"}, boundary: true},
	{ruleData: ruleData{Regex: `\b(xox[pe]-\d{6,13}-\d{6,13}-\d{6,13}-[a-zA-Z0-9]{16,64})\b`, Entropy: 3, Keywords: []string{"xoxp-", "xoxe-"}},
		of: "slack-user-token"},
	{ruleData: ruleData{Regex: `\b(xoxb-\d{6,13}-(?:\d{6,13}-)?[a-zA-Z0-9]{16,48})\b`, Entropy: 3, Keywords: []string{"xoxb-"}},
		of: "slack-bot-token"},
	{ruleData: ruleData{ID: "url-credentials", Group: "generic",
		Description: "Found a user name and password written into a URL (scheme://user:password@host).",
		Regex:       `(?i)\b[a-z][a-z0-9+.-]{1,15}://[^:@/\s"'<>]{1,64}:([^@/\s"'<>]{1,128})@[a-z0-9\[]`,
		SecretGroup: 1, Keywords: []string{"://"},
		Allow: []string{
			`(?i)^(?:password|passwd|secret|changeme|x+|\*+|\.+)$`,
			`^[$<{%\[]`, // ${VAR}, <password>, {{password}}, %s, [password]
		}}},
}

// addGuardRules compiles guardRules into rs.
func (rs *ruleSet) addGuardRules() error {
	for _, g := range guardRules {
		d := g.ruleData
		var base *rule
		if g.of != "" {
			i := slices.IndexFunc(rs.rules, func(r *rule) bool { return r.id == g.of })
			if i < 0 {
				return fmt.Errorf("guard rule: no gitleaks rule %q", g.of)
			}
			base = rs.rules[i]
			d.ID, d.Group, d.Description = base.id, base.group, base.description
		}
		r, err := compileRule(d)
		if err != nil {
			return err
		}
		if base != nil {
			r.allow, r.allowMatch, r.allowLine, r.stopwords = base.allow, base.allowMatch, base.allowLine, base.stopwords
		}
		r.guard, r.gate, r.gateBoundary = true, g.gate, g.boundary
		rs.rules = append(rs.rules, r)
		if !slices.Contains(rs.groups, r.group) {
			rs.groups = append(rs.groups, r.group)
		}
	}
	return nil
}

// gated reports whether a rule with a gate may match at text[p:].
func (r *rule) gated(text string, p int) bool {
	if r.gateBoundary && p > 0 && isWordByte(text[p-1]) {
		return false
	}
	for _, g := range r.gate {
		if strings.HasPrefix(text[p:], g) {
			return true
		}
	}
	return false
}
