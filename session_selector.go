package guard

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Session selectors read the state a session (or the agent as a whole) has accumulated over earlier
// steps, plus the contribution of the step being evaluated (docs/control-language.md, "Sessions"):
//
//	session.id              the session id (null without one)
//	session.labels          labels acquired, in order of acquisition, then the step's own labels
//	session.steps           names of the earlier allowed steps, oldest first (the last MaxSessionSteps)
//	session.count           steps of the session named like this step, this one included
//	session.count.<x>       steps named x or carrying label x, this one included when it is
//	session.sum.<field>     sum of the numeric step field <field> (context.cost, input.amount), this one included
//	agent.count             steps of the agent (every session) named like this step, this one included
//	agent.count.<x>         as session.count.<x>, over every session of the agent
//	agent.sum.<field>       as session.sum.<field>, over every session of the agent
//
// Counts and sums take an optional selector window (a duration): a fixed window that starts at the
// first step counted and restarts once it has passed.

// sessionKind is what a session selector reads.
type sessionKind uint8

const (
	sessID sessionKind = iota + 1
	sessLabels
	sessSteps
	sessCount      // count of steps named like the current step
	sessCountNamed // count of steps named x or labelled x
	sessSum
)

// Limits of session selectors.
const (
	// MaxSessionWindow is the longest window of a counter or sum.
	MaxSessionWindow = 31 * 24 * time.Hour
	// MaxSessionNameBytes bounds the x of session.count.<x> and the field of session.sum.<field>.
	MaxSessionNameBytes = 128
)

// sessionSel is a compiled session or agent selector.
type sessionSel struct {
	agent  bool // agent.*: the agent-wide state, not the session's
	kind   sessionKind
	name   string        // x of count.<x>
	field  selectorPath  // sum.<field>: the step field summed
	window time.Duration // 0: the whole session
	key    string        // counter key in the state ("" for id, labels, steps, and the current-name count)
	keyPre string        // the current-name count: the key without the step name
}

// counterKey is the key of a counter in a session or agent state: kind, window in ms and name.
func counterKey(kind sessionKind, window time.Duration, name string) string {
	k := "c"
	if kind == sessSum {
		k = "s"
	}
	return k + strconv.FormatInt(window.Milliseconds(), 10) + ":" + name
}

// parseSessionSelector compiles a session or agent selector path (already validated).
func parseSessionSelector(raw, window string) *sessionSel {
	segs := strings.Split(raw, ".")
	s := &sessionSel{agent: segs[0] == "agent"}
	if window != "" {
		s.window, _ = time.ParseDuration(window)
	}
	switch segs[1] {
	case "id":
		s.kind = sessID
	case "labels":
		s.kind = sessLabels
	case "steps":
		s.kind = sessSteps
	case "count":
		if len(segs) == 2 {
			s.kind = sessCount
			s.keyPre = counterKey(sessCountNamed, s.window, "")
			break
		}
		s.kind = sessCountNamed
		s.name = strings.Join(segs[2:], ".")
		s.key = counterKey(sessCountNamed, s.window, s.name)
	case "sum":
		s.kind = sessSum
		s.name = strings.Join(segs[2:], ".")
		s.field = compileSelectorPath(s.name)
		s.key = counterKey(sessSum, s.window, s.name)
	}
	return s
}

// checkSessionPath returns why a path starting with session or agent is not a valid selector, or "".
func checkSessionPath(segs []string) string {
	root := segs[0]
	if len(segs) < 2 {
		if root == "agent" {
			return "agent must be followed by count or sum"
		}
		return "session must be followed by id, labels, steps, count or sum"
	}
	rest := strings.Join(segs[2:], ".")
	if len(rest) > MaxSessionNameBytes {
		return fmt.Sprintf("the name after %s.%s must be at most %d bytes", root, segs[1], MaxSessionNameBytes)
	}
	switch segs[1] {
	case "id", "labels", "steps":
		if root == "agent" {
			return "agent must be followed by count or sum"
		}
		if len(segs) > 2 {
			return fmt.Sprintf("%s.%s takes no further segment", root, segs[1])
		}
		return ""
	case "count":
		return ""
	case "sum":
		if len(segs) < 3 {
			return fmt.Sprintf("%s.sum must name a numeric step field, as in %s.sum.context.cost", root, root)
		}
		switch segs[2] {
		case "input", "output", "context":
			return ""
		}
		return fmt.Sprintf("%s.sum must be followed by a field of input, output or context", root)
	}
	if root == "agent" {
		return "agent must be followed by count or sum"
	}
	return "session must be followed by id, labels, steps, count or sum"
}

// selectorWindow validates the window of a selector: a duration, only on counts and sums.
func (p *parser) selectorWindow(sel *Selector, v any, path string) {
	if v == nil {
		return
	}
	s, ok := p.str(v, path)
	if !ok {
		return
	}
	segs := strings.SplitN(sel.Path, ".", 3)
	if len(segs) < 2 || (segs[0] != "session" && segs[0] != "agent") || (segs[1] != "count" && segs[1] != "sum") {
		p.add(path, CodeInvalid, "is allowed only on session.count, session.sum, agent.count and agent.sum")
		return
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < time.Second || d > MaxSessionWindow {
		p.add(path, CodeInvalid, fmt.Sprintf("must be a duration between 1s and %s, as in \"60s\" or \"24h\"", MaxSessionWindow))
		return
	}
	sel.Window = s
}

// isSessionPath reports whether a selector path reads session or agent state.
func isSessionPath(raw string) bool {
	return strings.HasPrefix(raw, "session.") || strings.HasPrefix(raw, "agent.")
}

// pathIDSel returns the snapshot-wide id of selector s, as pathID does; a session selector is keyed by its
// path and window, and compiled into its session form.
func (c *compiler) pathIDSel(s *Selector, cc *cControl, seen map[int32]bool) int32 {
	if !isSessionPath(s.Path) {
		return c.pathID(s.Path, cc, seen)
	}
	key := s.Path + "\x00" + s.Window
	pid, ok := c.pathIDs[key]
	if !ok {
		pid = int32(len(c.paths))
		c.pathIDs[key] = pid
		sel := selectorPath{raw: s.Path, root: rootSession, sess: parseSessionSelector(s.Path, s.Window)}
		c.paths = append(c.paths, cPath{sel: sel})
	}
	if !seen[pid] {
		seen[pid] = true
		cc.paths = append(cc.paths, pid)
	}
	cc.sessionReads = true
	return pid
}
