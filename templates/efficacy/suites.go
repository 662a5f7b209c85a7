package efficacy

import (
	guard "github.com/guardrail-control/guard"
)

// Suite is one shipped template measured on corpora: how it is rendered, how a corpus item becomes the step
// it is evaluated on, and which corpora hold attacks (a match is a catch) and which benign text (a match is
// a false positive).
type Suite struct {
	Template string // the shipped template's name
	// Label names the suite's rows when it is not the template alone: TEMPLATE:part for a part of a
	// template measured on its own (the classifier of a prompt template without its patterns).
	Label string
	// PartOnly marks a suite that measures a part of a template (Params switch the rest off), so the
	// template's own tests, written for the whole, are not required to pass.
	PartOnly bool
	Params   map[string]any // render parameters beyond the defaults
	Stage    guard.Stage
	Step     func(text string) *guard.Step
	Attacks  []string // corpus names (see Corpus)
	Benign   []string
}

// name is the suite's row name: Label, or the template's name.
func (s Suite) name() string {
	if s.Label != "" {
		return s.Label
	}
	return s.Template
}

// toolOutput is a tool's result read at the post stage: the text is the whole output.
func toolOutput(text string) *guard.Step {
	return &guard.Step{Type: "tool", Name: "fetch", Input: map[string]any{"url": "https://example.com/page"}, Output: text}
}

// neverMatches is a pattern no text matches: a template's regular expressions set to it leave its
// classifier branch measured alone.
const neverMatches = `\b\B`

// llmInput is a prompt to a model: the text is the whole input.
func llmInput(text string) *guard.Step { return &guard.Step{Type: "llm", Name: "chat", Input: text} }

// toolInput is a tool called with the text as its whole input (a shell command, a URL to fetch).
func toolInput(name string) func(string) *guard.Step {
	return func(text string) *guard.Step { return &guard.Step{Type: "tool", Name: name, Input: text} }
}

// sqlTool is a database tool called with {"query": text}, as destructive-sql expects by default.
func sqlTool(text string) *guard.Step {
	return &guard.Step{Type: "tool", Name: "run_sql", Input: map[string]any{"query": text}}
}

// The corpora's names: shared ones are files of the shared efficacy directory (without .jsonl), own ones are
// files of this package's testdata, written for the repository.
const (
	sharedSQLi      = "attack_sqli"
	sharedCmdi      = "attack_command_injection"
	sharedSSRF      = "attack_ssrf_urls"
	sharedJailbreak = "attack_jailbreak"
	sharedInjection = "attack_prompt_injection"
	sharedPrompts   = "benign_prompts"
	sharedSQL       = "benign_sql"
	sharedPII       = "pii_documents"

	// Optional shared corpora: measured when the directory has them (a held-out set does), skipped silently
	// when it does not (the development directory has no prompt-extraction attacks or benign tool arguments).
	sharedExtraction = "attack_prompt_extraction"
	sharedArgs       = "benign_args"

	ownSQLi       = "own/attack_sqli"
	ownCmdi       = "own/attack_command_injection"
	ownShell      = "own/attack_destructive_shell"
	ownSSRF       = "own/attack_ssrf"
	ownJailbreak  = "own/attack_jailbreak"
	ownInjection  = "own/attack_prompt_injection"
	ownExtraction = "own/attack_prompt_extraction"
	ownSecrets    = "own/attack_secrets"
	ownBenignSQL  = "own/benign_sql"
	ownBenignSh   = "own/benign_shell"
	ownBenignURL  = "own/benign_urls"
	ownBenignText = "own/benign_text"
	ownBenignArgs = "own/benign_args"
	ownBenignSec  = "own/benign_secrets"
	// The secret rules' own examples: the true and false positives each rule of gitleaks' default rule set
	// is validated with, generated with the rules (evaluator/secrets/gitleaksgen), each labelled with its
	// rule and family.
	ownGitleaksTP = "own/attack_secrets_gitleaks"
	ownGitleaksFP = "own/benign_secrets_gitleaks"
	ownPII        = "own/pii_documents"

	// Documents with an instruction to the agent hidden in them, and ordinary documents with instructions
	// for people (issue 37); written for the measurement, not used to train the classifier. Prompts are not
	// a benign corpus of indirect-injection: a user's request inside a tool result is what it looks for.
	ownIndirect  = "own/attack_indirect_injection"
	ownBenignDoc = "own/benign_documents"

	// Cases of sql-injection alone (issue 28): injections inside query-string and JSON values, and whole
	// statements whose UNIONs, catalogues and time functions are ordinary SQL. destructive-sql judges
	// queries a tool runs and is measured on its own cases.
	ownSQLiValues    = "own/attack_sqli_values"
	ownSQLStatements = "own/benign_sql_statements"

	// Cases of destructive-sql alone (issue 35): ordinary analytics and DDL SQL of PostgreSQL, MySQL,
	// SQLite, SQL Server and the warehouse dialects (sampling, FETCH ... WITH TIES, arrays and structs,
	// window functions), much of which no grammar reads, and destructive statements disguised behind
	// such forms in each dialect.
	ownSQLDialects = "own/benign_sql_dialects"
	// Ordinary text that sql-injection read as injection (issue 35): prose lines starting with And or
	// Where, log lines starting with a timestamp, quoted arguments before --flags, backtick substitution,
	// find's -path globs, a quoted phrase before a Markdown heading.
	ownProseSQLi = "own/benign_prose_sqli"
	// Ordinary text that command-injection read as injection (issue 35): a quoted sentence after a
	// newline, an interpreter's name used as a word after a newline, C code.
	ownProseCmdi    = "own/benign_prose_cmdi"
	ownSQLDisguised = "own/attack_sql_disguised"
)

// Suites are the measured templates. Every template a security team would turn on against attacker text is
// here; the approval and allow-list templates decide on values the operator chose, not on attacker text.
var Suites = []Suite{
	{Template: "sql-injection", Stage: guard.StagePre, Step: llmInput,
		Attacks: []string{sharedSQLi, ownSQLi, ownSQLiValues}, Benign: []string{sharedSQL, ownBenignSQL, ownSQLStatements, sharedPrompts, ownBenignText, ownProseSQLi}},
	{Template: "destructive-sql", Params: map[string]any{"tool_names": []any{"run_sql"}}, Stage: guard.StagePre, Step: sqlTool,
		Attacks: []string{sharedSQLi, ownSQLi, ownSQLDisguised}, Benign: []string{sharedSQL, ownBenignSQL, ownSQLDialects}},
	{Template: "command-injection", Stage: guard.StagePre, Step: toolInput("shell"),
		Attacks: []string{sharedCmdi, ownCmdi}, Benign: []string{sharedArgs, ownBenignArgs, sharedPrompts, ownBenignText, ownBenignURL, ownProseCmdi}},
	{Template: "destructive-shell", Stage: guard.StagePre, Step: toolInput("shell"),
		Attacks: []string{ownShell}, Benign: []string{ownBenignSh, sharedPrompts, ownBenignText}},
	{Template: "dangerous-uris", Stage: guard.StagePre, Step: toolInput("fetch"),
		Attacks: []string{sharedSSRF, ownSSRF}, Benign: []string{ownBenignURL, sharedPrompts, ownBenignText}},
	{Template: "prompt-injection", Stage: guard.StagePre, Step: llmInput,
		Attacks: []string{sharedInjection, ownInjection}, Benign: []string{sharedPrompts, ownBenignText}},
	{Template: "system-prompt-extraction", Stage: guard.StagePre, Step: llmInput,
		Attacks: []string{sharedExtraction, ownExtraction}, Benign: []string{sharedPrompts, ownBenignText}},
	{Template: "jailbreak-markers", Stage: guard.StagePre, Step: llmInput,
		Attacks: []string{sharedJailbreak, ownJailbreak}, Benign: []string{sharedPrompts, ownBenignText}},
	{Template: "indirect-injection", Stage: guard.StagePost, Step: toolOutput,
		Attacks: []string{ownIndirect, ownInjection}, Benign: []string{ownBenignDoc}},
	// The prompt-attack classifier alone, as the prompt templates use it (their patterns set to match
	// nothing): what it adds beside the patterns. Part of the shared corpora and the repository's
	// prompt-attack cases trained it (evaluator/promptattack/internal/training names which); its own
	// held-out figures are in docs/efficacy.md.
	{Label: "prompt-injection:classifier", Template: "prompt-injection", PartOnly: true, Stage: guard.StagePre, Step: llmInput,
		Params:  map[string]any{"pattern": neverMatches, "addressed_pattern": neverMatches},
		Attacks: []string{sharedInjection, ownInjection}, Benign: []string{sharedPrompts, ownBenignText}},
	{Label: "system-prompt-extraction:classifier", Template: "system-prompt-extraction", PartOnly: true, Stage: guard.StagePre, Step: llmInput,
		Params:  map[string]any{"pattern": neverMatches},
		Attacks: []string{sharedExtraction, ownExtraction}, Benign: []string{sharedPrompts, ownBenignText}},
	{Label: "jailbreak-markers:classifier", Template: "jailbreak-markers", PartOnly: true, Stage: guard.StagePre, Step: llmInput,
		Params:  map[string]any{"pattern": neverMatches, "markers": []any{"zz-no-marker-zz"}},
		Attacks: []string{sharedJailbreak, ownJailbreak}, Benign: []string{sharedPrompts, ownBenignText}},
	{Template: "secrets-in-inputs", Stage: guard.StagePre, Step: llmInput,
		Attacks: []string{ownSecrets, ownGitleaksTP}, Benign: []string{ownBenignSec, ownGitleaksFP, sharedPrompts, ownBenignText}},
}

// optionalCorpora are the shared corpora whose absence from the directory is not a defect of the run: the
// row is left out rather than reported as skipped.
var optionalCorpora = map[string]bool{sharedExtraction: true, sharedArgs: true}

// PIISuite measures the pii evaluator through the pii-in-outputs template, per entity type, on documents
// with labelled spans: a labelled span is caught when a finding of its type overlaps it; a document counts
// as a false positive of a type when a finding of that type overlaps no labelled span of the type.
var PIISuite = struct {
	Template string
	Corpora  []string
}{Template: "pii-in-outputs", Corpora: []string{sharedPII, ownPII}}

// piiTypes maps the corpora's span labels to the pii evaluator's entity types; other labels (names,
// addresses, ...) are types guard does not claim and are ignored.
var piiTypes = map[string]string{
	"EMAIL_ADDRESS": "email",
	"PHONE_NUMBER":  "phone",
	"CREDIT_CARD":   "credit_card",
	"IBAN_CODE":     "iban",
	"US_SSN":        "us_ssn",
	"IP_ADDRESS":    "ip_address",
}
