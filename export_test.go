package guard

// WithoutRunPrefilter turns the run prefilter off, so that tests can compare results with and without it.
func WithoutRunPrefilter() Option { return func(c *engineConfig) { c.noRunPrefilter = true } }
