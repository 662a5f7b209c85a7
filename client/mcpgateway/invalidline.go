package mcpgateway

import (
	"sync/atomic"
	"unicode/utf8"

	"go.uber.org/zap"
)

// Bounds of LogInvalidLines: a chatty library must not fill the log, nor a long line.
const (
	maxLoggedInvalidLines = 20
	maxLoggedInvalidBytes = 200
)

// LogInvalidLines returns a LineTransport.InvalidLine that logs the first 20 skipped lines at warn level
// (each cut to 200 bytes), then once that further ones are skipped without a log; logger nil logs nothing.
func LogInvalidLines(logger *zap.Logger) func(line []byte, err error) {
	if logger == nil {
		return func([]byte, error) {}
	}
	var n atomic.Int64
	return func(line []byte, err error) {
		switch k := n.Add(1); {
		case k <= maxLoggedInvalidLines:
			logger.Warn("upstream wrote a line that is not JSON-RPC; skipped",
				zap.String("line", cutLine(line)), zap.Int("bytes", len(line)), zap.Error(err))
		case k == maxLoggedInvalidLines+1:
			logger.Warn("upstream keeps writing lines that are not JSON-RPC; further ones are skipped without a log")
		}
	}
}

// cutLine is line as a string of at most maxLoggedInvalidBytes bytes, cut at a rune boundary.
func cutLine(line []byte) string {
	if len(line) <= maxLoggedInvalidBytes {
		return string(line)
	}
	cut := maxLoggedInvalidBytes
	for cut > 0 && !utf8.RuneStart(line[cut]) {
		cut--
	}
	return string(line[:cut]) + "..."
}
