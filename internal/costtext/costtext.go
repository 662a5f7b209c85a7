// Package costtext writes the texts that the cost benchmarks and the cost-growth test feed the detectors:
// ordinary prose, prose dense in the detectors' trigger words, and either with an attack at the end, at
// any length. Every text is deterministic (a fixed seed), so that runs compare.
//
// The prose is written here, word by word from short sentence shapes, and not taken from any corpus: the
// texts kept apart for measuring detection are never used.
package costtext

import "strings"

// Kinds of text.
const (
	Ordinary = "ordinary" // prose an agent reads every day: nothing in it is an attack
	Triggers = "triggers" // prose in which about every other word is a literal of some detector's pattern
	Attack   = "attack"   // ordinary prose with an attack (the template's own example) as its last sentence
)

// Sizes are the lengths the cost benchmarks and the growth test use: 1 KB to 1 MB, each 4 times the last.
var Sizes = []int{1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20}

// rng is a small deterministic generator (xorshift64*).
type rng uint64

func (r *rng) next() uint64 {
	x := uint64(*r)
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	*r = rng(x)
	return x * 2685821657736338717
}

func (r *rng) pick(words []string) string { return words[r.next()%uint64(len(words))] }

// Ordinary words: the common English words that the prompt-family patterns use as literals (the, your,
// all, any, you, said, given, main, email, system, rules ...) are in, in ordinary use.
var (
	subjects = []string{"The team", "Our main office", "The report", "Your order", "The new release", "Each user",
		"The email from Anna", "The system", "The library", "This guide", "The manager", "Every page",
		"The old server", "Any customer", "The data", "The previous version", "The original plan", "My colleague"}
	verbs = []string{"was given", "said", "needs", "describes", "explains", "shows", "covers", "lists",
		"includes", "sends", "reads", "follows", "checks", "updates", "keeps", "moves", "opens", "closes"}
	objects = []string{"the quarterly numbers", "all the shipping notes", "your account settings", "the main branch",
		"a short summary", "the meeting notes", "any open tickets", "the weather report", "the new schedule",
		"two small changes", "the test results", "a list of parts", "the holiday plans", "the garden layout",
		"the kitchen rules", "the billing address", "our support email", "the user manual"}
	tails = []string{"before the end of the week", "for the team in Berlin", "after lunch", "in the main hall",
		"with a few remarks", "as agreed on Monday", "without any delay", "for all new staff", "in plain words",
		"on the second floor", "so that you can plan ahead", "as you said yesterday", "for the given period",
		"in the shared folder", "at 10:30 on Tuesday", "by email", "with the usual care", "for about 20 minutes"}
	closers = []string{". ", ". ", ". ", "! ", "? ", ".\n", ".\n\n", "; then ", ", and "}
)

// Trigger words: literals of the shipped templates' patterns (prompt injection, extraction, jailbreak,
// SQL, shell, URIs, secrets), mixed into ordinary prose in an order that forms no attack.
var triggers = []string{
	"ignore", "previous", "instructions", "system", "prompt", "rules", "assistant", "model", "AI", "agent",
	"reveal", "repeat", "developer", "mode", "jailbreak", "DAN", "persona", "unfiltered", "filters", "policy",
	"override", "bypass", "forget", "above", "earlier", "guidelines", "restrictions", "now", "new", "task",
	"select", "union", "drop", "table", "from", "where", "insert", "delete", "exec", "sleep", "rm", "curl",
	"wget", "bash", "sudo", "chmod", "token", "key", "secret", "password", "api", "admin", "root", "script",
	"javascript", "data", "file", "http", "message", "context", "training", "role", "pretend", "hypothetical",
	"story", "character", "evil", "unrestricted", "answer", "respond", "output", "print", "text", "words",
}

// Text returns n bytes of the given kind (Ordinary or Triggers; Attack is WithAttack). The text ends at a
// byte boundary of an ASCII character: it is pure ASCII.
func Text(kind string, n int) string {
	r := rng(0x9e3779b97f4a7c15)
	var b strings.Builder
	b.Grow(n + 256)
	for b.Len() < n {
		if kind == Triggers {
			writeTriggerSentence(&b, &r)
		} else {
			writeSentence(&b, &r)
		}
	}
	return b.String()[:n]
}

func writeSentence(b *strings.Builder, r *rng) {
	b.WriteString(r.pick(subjects))
	b.WriteByte(' ')
	b.WriteString(r.pick(verbs))
	b.WriteByte(' ')
	b.WriteString(r.pick(objects))
	b.WriteByte(' ')
	b.WriteString(r.pick(tails))
	b.WriteString(r.pick(closers))
}

// writeTriggerSentence writes an ordinary sentence with a trigger word after each of its parts, and a
// comma-separated run of trigger words in place of the tail: every detector's literal sets occur many
// times per kilobyte, and the branch filters open.
func writeTriggerSentence(b *strings.Builder, r *rng) {
	b.WriteString(r.pick(subjects))
	b.WriteString(" (")
	b.WriteString(r.pick(triggers))
	b.WriteString(") ")
	b.WriteString(r.pick(verbs))
	b.WriteByte(' ')
	b.WriteString(r.pick(objects))
	b.WriteString(", ")
	for i := 0; i < 4; i++ {
		b.WriteString(r.pick(triggers))
		b.WriteString(", ")
	}
	b.WriteString(r.pick(tails))
	b.WriteString(r.pick(closers))
}

// WithAttack returns n bytes: ordinary prose whose last sentence is attack (the whole text is attack when
// it is longer than n).
func WithAttack(attack string, n int) string {
	if len(attack)+2 >= n {
		return attack
	}
	return Text(Ordinary, n-len(attack)-2) + "\n\n" + attack
}
