package server

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/singleflight"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/evaluator"
)

// engineCache keeps one compiled engine per agent, tagged with the agent's revision, so POST /evaluation
// does not read controls from the database.
//
// Invalidation is by generation: every local write, and every change of the store's policy epoch seen by
// the poller (a write through another replica sharing the database), bumps gen. An entry of an older
// generation is revalidated on its next use with one cheap AgentRevision query and recompiled only when
// the revision differs. Loads are deduplicated per agent (singleflight), so a burst of requests for a
// cold or stale agent compiles once.
type engineCache struct {
	reader guard.PolicyReader
	reg    *evaluator.Registry
	log    *zap.Logger

	gen     atomic.Uint64
	mu      sync.RWMutex
	entries map[string]*cacheEntry
	flight  singleflight.Group

	// onRebuild is called after each compilation of an agent's engine (metrics).
	onRebuild func(agent string)
	// sessions is the session store every agent's engine shares (sessions.go).
	sessions guard.SessionStore
}

// cacheEntry is immutable; revalidation replaces it.
type cacheEntry struct {
	engine *guard.Engine
	rev    guard.Revision
	gen    uint64
}

// loadTimeout bounds a cache load (it runs detached from the request that triggered it, because other
// requests may be waiting on the same load).
const loadTimeout = 10 * time.Second

func newEngineCache(reader guard.PolicyReader, reg *evaluator.Registry, log *zap.Logger) *engineCache {
	return &engineCache{
		reader:  reader,
		reg:     reg,
		log:     log,
		entries: make(map[string]*cacheEntry),
	}
}

// invalidate marks every entry stale.
func (c *engineCache) invalidate() { c.gen.Add(1) }

// get returns the engine for agent, loading or revalidating it when needed.
func (c *engineCache) get(ctx context.Context, agent string) (*guard.Engine, error) {
	g := c.gen.Load()
	c.mu.RLock()
	e := c.entries[agent]
	c.mu.RUnlock()
	if e != nil && e.gen == g {
		return e.engine, nil
	}
	v, err, _ := c.flight.Do(agent, func() (any, error) {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loadTimeout)
		defer cancel()
		return c.load(lctx, agent)
	})
	if err != nil {
		if e != nil && errors.Is(err, guard.ErrUnavailable) {
			// Keep enforcing the last known policy while the database is away.
			c.log.Warn("policy revalidation failed; using the cached engine", zap.String("agent", agent), zap.Error(err))
			return e.engine, nil
		}
		return nil, err
	}
	return v.(*guard.Engine), nil
}

func (c *engineCache) load(ctx context.Context, agent string) (*guard.Engine, error) {
	g := c.gen.Load() // read before the store, so a write during the load leaves the entry stale
	c.mu.RLock()
	cur := c.entries[agent]
	c.mu.RUnlock()
	if cur != nil && cur.gen >= g {
		return cur.engine, nil
	}
	if cur != nil {
		rev, err := c.reader.AgentRevision(ctx, agent)
		switch {
		case errors.Is(err, guard.ErrAgentNotFound):
			c.drop(agent)
			return nil, err
		case err != nil:
			return nil, err
		case rev == cur.rev:
			c.put(agent, &cacheEntry{engine: cur.engine, rev: rev, gen: g})
			return cur.engine, nil
		}
	}
	acs, rev, err := c.reader.AgentControls(ctx, agent)
	if err != nil {
		if errors.Is(err, guard.ErrAgentNotFound) {
			c.drop(agent)
		}
		return nil, err
	}
	eng := c.compile(agent, acs)
	if err := c.applyStepLabels(ctx, agent, eng); err != nil {
		return nil, err
	}
	c.put(agent, &cacheEntry{engine: eng, rev: rev, gen: g})
	if c.onRebuild != nil {
		c.onRebuild(agent)
	}
	return eng, nil
}

func (c *engineCache) put(agent string, e *cacheEntry) {
	c.mu.Lock()
	c.entries[agent] = e
	c.mu.Unlock()
}

func (c *engineCache) drop(agent string) {
	c.mu.Lock()
	delete(c.entries, agent)
	c.mu.Unlock()
}

// poll reads the store's policy epoch every interval and invalidates the cache when it changed. It closes
// done when ctx ends.
func (c *engineCache) poll(ctx context.Context, interval time.Duration, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(interval)
	defer t.Stop()
	// The first successful read always invalidates: entries loaded before it (the poller goroutine may
	// start late) cannot be assumed to be newer than the epoch it reads.
	var last int64
	known, failing := false, false
	for first := true; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
		epoch, err := c.reader.PolicyEpoch(ctx)
		if err != nil {
			if !failing && ctx.Err() == nil {
				c.log.Warn("policy epoch poll failed", zap.Error(err))
			}
			failing = true
			continue
		}
		failing = false
		if !known || epoch != last {
			last, known = epoch, true
			c.invalidate()
		}
	}
}
