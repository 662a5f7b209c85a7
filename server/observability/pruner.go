package observability

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	guard "github.com/guardrail-control/guard"
)

// PruneInterval is how often StartPruner deletes old events after its first run at start.
const PruneInterval = time.Hour

// StartPruner deletes events older than retention (OBSERVABILITY_RETENTION_DAYS) now and then every
// PruneInterval, in a goroutine, until ctx ends or stop is called; stop waits for the goroutine to
// return. A retention of zero or less disables pruning.
func StartPruner(ctx context.Context, store guard.EventStore, retention time.Duration, logger *zap.Logger) (stop func()) {
	return startPruner(ctx, store, retention, PruneInterval, time.Now, logger)
}

func startPruner(ctx context.Context, store guard.EventStore, retention, every time.Duration,
	now func() time.Time, logger *zap.Logger) (stop func()) {
	if retention <= 0 || store == nil {
		return func() {}
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		ticker := time.NewTicker(every)
		defer ticker.Stop()
		for {
			before := now().Add(-retention)
			n, err := store.PruneEvents(ctx, before)
			switch {
			case err != nil && ctx.Err() == nil:
				logger.Warn("observability: pruning old events failed; will retry", zap.Duration("every", every), zap.Error(err))
			case n > 0:
				logger.Info("observability: pruned old events", zap.Int64("events", n), zap.Time("before", before))
			}
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(cancel)
		<-done
	}
}
