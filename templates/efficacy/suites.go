package efficacy

import (
	guard "github.com/guardrail-control/guard"
)

// Suite is one shipped template measured on corpora: how it is rendered, how a corpus item becomes the step
// it is evaluated on, and which corpora hold attacks (a match is a catch) and which benign text (a match is
// a false positive).
type Suite struct {
	Template string         // the shipped template's name
	Params   map[string]any // render parameters beyond the defaults
	Stage    guard.Stage
	Step     func(text string) *guard.Step
	Attacks  []string // corpus names (see Corpus)
	Benign   []string
}

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

	// Corpora a directory may hold or not (../shared/efficacy has none of them; a held-out set may):
	// measured when present, left out silently when absent.
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
	ownPII        = "own/pii_documents"
)

// optionalShared are the shared corpora whose absence from the directory is not a skip.
var optionalShared = map[string]bool{sharedExtraction: true, sharedArgs: true}

// Suites are the measured templates. Every template a security team would turn on against attacker text is
// here; the approval and allow-list templates decide on values the operator chose, not on attacker text.
var Suites = []Suite{
	{Template: "sql-injection", Stage: guard.StagePre, Step: llmInput,
		Attacks: []string{sharedSQLi, ownSQLi}, Benign: []string{sharedSQL, ownBenignSQL, sharedPrompts, ownBenignText}},
	{Template: "destructive-sql", Params: map[string]any{"tool_names": []any{"run_sql"}}, Stage: guard.StagePre, Step: sqlTool,
		Attacks: []string{sharedSQLi, ownSQLi}, Benign: []string{sharedSQL, ownBenignSQL}},
	{Template: "command-injection", Stage: guard.StagePre, Step: toolInput("shell"),
		Attacks: []string{sharedCmdi, ownCmdi}, Benign: []string{sharedArgs, ownBenignArgs, sharedPrompts, ownBenignText, ownBenignURL}},
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
	{Template: "secrets-in-inputs", Stage: guard.StagePre, Step: llmInput,
		Attacks: []string{ownSecrets}, Benign: []string{ownBenignSec, sharedPrompts, ownBenignText}},
}

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
