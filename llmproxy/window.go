package llmproxy

import (
	"unicode/utf8"

	guard "github.com/guardrail-control/guard"
)

// textWindow holds the streamed text of one answer that is not released yet. Text is checked once
// size bytes are held; what passed is released except the last overlap bytes, which start the next
// window, so that a match up to overlap bytes long is seen whole whichever window edge it straddles.
// When a redaction touched those last bytes, nothing of them is released yet: the window grows (up to
// four windows) until the redacted text lies before the edge.
type textWindow struct {
	size, overlap int
	pending       []byte
	nextAt        int // check when this many bytes are held
	checked       bool
	// full is the whole answer for the step of record at its end, up to maxFull bytes.
	full    []byte
	maxFull int
}

func newTextWindow(size, overlap, maxFull int) *textWindow {
	return &textWindow{size: size, overlap: overlap, nextAt: size, maxFull: maxFull}
}

func (tw *textWindow) add(s string) {
	tw.pending = append(tw.pending, s...)
	if room := tw.maxFull - len(tw.full); room > 0 {
		if len(s) > room {
			s = s[:room]
		}
		tw.full = append(tw.full, s...)
	}
}

func (tw *textWindow) ready() bool { return len(tw.pending) >= tw.nextAt }

// cut decides what to release after a check of the held text found redacted as its redacted form
// (redacted == held when nothing was redacted), and keeps the rest held.
func (tw *textWindow) cut(redacted string) string {
	held := string(tw.pending)
	tw.checked = true
	cut := len(held) - tw.overlap
	for cut > 0 && !utf8.RuneStart(held[cut]) {
		cut--
	}
	tail := len(held) - cut
	switch {
	case cut <= 0:
		tw.nextAt = len(held) + tw.size/4
		return ""
	case redacted == held || commonSuffix(held, redacted) >= tail:
		tw.pending = append(tw.pending[:0], held[cut:]...)
		tw.nextAt = tw.size
		return redacted[:len(redacted)-tail]
	case len(held) < 4*tw.size:
		tw.nextAt = len(held) + tw.size/4
		return ""
	}
	tw.pending = tw.pending[:0]
	tw.nextAt = tw.size
	return redacted
}

func commonSuffix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[len(a)-1-n] == b[len(b)-1-n] {
		n++
	}
	return n
}

// redactedText is the text a check handed back: the redacted output when it is text, else text itself.
func redactedText(red any, text string) string {
	if s, ok := red.(string); ok {
		return s
	}
	return text
}

// checkWindow checks the held text of tw (an intermediate window: without the session, so that session
// counters count each answer once) and returns what may be released.
func (p *Proxy) checkWindow(c *call, tw *textWindow, name string) (string, error) {
	text := string(tw.pending)
	step := &guard.Step{Type: "llm", Name: name, Output: text, Context: c.stepContext(false)}
	red, err := p.check(c, KindWindow, step, guard.StagePost)
	if err != nil {
		return "", err
	}
	return tw.cut(redactedText(red, text)), nil
}

// finishText ends the answer of tw: the held rest is checked and, with the session, the whole answer is
// the step of record (an llm step at stage post). It returns the rest to release.
func (p *Proxy) finishText(c *call, tw *textWindow, name string) (string, error) {
	if !tw.checked {
		// Nothing released yet: one check of the whole answer decides and redacts.
		text := string(tw.pending)
		tw.pending = tw.pending[:0]
		step := &guard.Step{Type: "llm", Name: name, Output: text, Context: c.stepContext(true)}
		red, err := p.check(c, KindLLMPost, step, guard.StagePost)
		if err != nil {
			return "", err
		}
		return redactedText(red, text), nil
	}
	rest := ""
	if len(tw.pending) > 0 {
		text := string(tw.pending)
		step := &guard.Step{Type: "llm", Name: name, Output: text, Context: c.stepContext(false)}
		red, err := p.check(c, KindWindow, step, guard.StagePost)
		if err != nil {
			return "", err
		}
		rest = redactedText(red, text)
		tw.pending = tw.pending[:0]
	}
	step := &guard.Step{Type: "llm", Name: name, Output: string(tw.full), Context: c.stepContext(true)}
	if _, err := p.check(c, KindLLMPost, step, guard.StagePost); err != nil {
		return "", err
	}
	return rest, nil
}
