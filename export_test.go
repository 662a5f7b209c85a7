package guard

// WithoutRunPrefilter turns the run prefilter off, so that tests can compare results with and without it.
func WithoutRunPrefilter() Option { return func(c *engineConfig) { c.noRunPrefilter = true } }

// WithLiveIndexMin makes Check and Evaluate consult the live index from n candidates on (n < 0: never),
// so that tests can compare the live index with the plain walk on small control sets.
func WithLiveIndexMin(n int) Option { return func(c *engineConfig) { c.liveIndexMin = n } }
