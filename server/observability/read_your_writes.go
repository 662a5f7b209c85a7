package observability

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"
)

// DefaultReadWait is API.ReadWait's default: how long a query or a statistics request waits at most for
// the events buffered before it to be written.
const DefaultReadWait = 2 * time.Second

// readWait is the effective bound of catchUp; 0 when reads do not wait.
func (a *API) readWait() time.Duration {
	switch {
	case a.ReadWait < 0:
		return 0
	case a.ReadWait == 0:
		return DefaultReadWait
	}
	return a.ReadWait
}

// catchUp gives a read its writes: the events this server acknowledged (202) or recorded before the read
// arrived are still in the recorder's buffer until the next batch, so a query or statistics request
// first asks the writer to write what is buffered and waits for it, at most readWait. Batching on the
// write path stays as it is: a read costs one (partial) batch write, and only when something is
// buffered. When the wait runs out, or the database refuses the write, the read goes on with what is
// stored, and says so in the X-Events-Pending header (events buffered, not yet readable).
func (a *API) catchUp(w http.ResponseWriter, r *http.Request) {
	if a.Recorder == nil || a.Recorder.Stats().Pending == 0 {
		return
	}
	if wait := a.readWait(); wait > 0 {
		ctx, cancel := context.WithTimeout(r.Context(), wait)
		err := a.Recorder.Flush(ctx)
		cancel()
		if err != nil {
			a.logger().Debug("observability read: buffered events not written before the read", zap.Error(err))
		}
	}
	if n := a.Recorder.Stats().Pending; n > 0 {
		w.Header().Set(PendingHeader, strconv.Itoa(n))
	}
}

// PendingHeader, on a query or statistics answer, counts the events this server held in its buffer,
// not yet written, when the answer was computed (see API.catchUp); absent when there were none.
const PendingHeader = "X-Events-Pending"
