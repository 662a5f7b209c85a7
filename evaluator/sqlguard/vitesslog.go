package sqlguard

import (
	"log/slog"

	vtlog "vitess.io/vitess/go/vt/log"
)

// Vitess' parser logs through its own logger, and what it logs quotes the query: a DDL it parses only in
// part is accepted with the warning "ignoring error parsing DDL '<the whole query>'". The query is a
// step's untrusted content (it may hold secrets or personal data, and it is attacker-chosen text in the
// service's logs), so the package silences Vitess' logger when it is imported: guard uses only Vitess'
// parser, whose log lines carry nothing the service needs. Both of Vitess' outputs are covered: its
// logging functions (which write to glog when structured logging is off) become no-ops, and its
// structured logger is swapped for one that discards.
func init() { silenceVitessLog() }

func silenceVitessLog() {
	discard := func(string, ...slog.Attr) {}
	discardDepth := func(int, string, ...slog.Attr) {}
	vtlog.Debug, vtlog.Info, vtlog.Warn, vtlog.Error = discard, discard, discard, discard
	vtlog.DebugDepth, vtlog.InfoDepth, vtlog.WarnDepth, vtlog.ErrorDepth = discardDepth, discardDepth, discardDepth, discardDepth
	vtlog.SwapLogger(slog.New(slog.DiscardHandler))
}
