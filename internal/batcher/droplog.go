package batcher

import "time"

// DropLog counts items dropped (or refused) and says when to log them: at most once per interval, so
// that a full buffer under load cannot flood the log. The zero value is ready; it is not safe for
// concurrent use (the recorder's mutex guards it).
type DropLog struct {
	unlogged int64
	last     time.Time
}

// Add counts n more items and returns how many to log now, all those not logged yet, or 0 when the
// previous log line is less than every old.
func (d *DropLog) Add(n int64, every time.Duration) int64 {
	d.unlogged += n
	now := time.Now()
	if now.Sub(d.last) < every {
		return 0
	}
	n, d.unlogged, d.last = d.unlogged, 0, now
	return n
}
