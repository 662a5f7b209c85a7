package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/guardrail-control/guard/server"
)

// keyFileCheckInterval is how often `guard serve` looks for a changed key file.
const keyFileCheckInterval = 2 * time.Second

// watchKeyFile reads GUARD_API_KEYS_FILE again on SIGHUP and whenever its content changes (checked every
// keyFileCheckInterval: a Kubernetes Secret mounted as a volume is replaced by a symlink swap, which a
// content check sees and an inotify watch on the file would not), and puts it in force without a
// restart. A file that does not load (a syntax error, a duplicate secret) is logged with every problem
// and the keys in force stay: a bad edit never locks everyone out. It returns when ctx ends.
func watchKeyFile(ctx context.Context, path string, srv *server.Server, logger *zap.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	sum := func() []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		s := sha256.Sum256(b)
		return s[:]
	}
	last := sum()
	tick := time.NewTicker(keyFileCheckInterval)
	defer tick.Stop()
	for {
		why := ""
		select {
		case <-ctx.Done():
			return
		case <-hup:
			why = "SIGHUP"
		case <-tick.C:
			now := sum()
			if now == nil || bytes.Equal(now, last) {
				continue
			}
			why = "file changed"
		}
		last = sum()
		keys, err := readKeyFile(path)
		if err == nil {
			err = srv.SetKeyFile(keys)
		}
		if err != nil {
			logger.Error("the key file was not reloaded; the keys in force stay", zap.String("reason", why), zap.Error(err))
			continue
		}
		logger.Info("key file reloaded", zap.String("reason", why), zap.Int("keys", len(keys)))
	}
}
