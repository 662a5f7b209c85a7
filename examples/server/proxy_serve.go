package main

import (
	"go.uber.org/zap"

	"github.com/guardrail-control/guard/llmproxy"
	"github.com/guardrail-control/guard/server"
	"github.com/guardrail-control/guard/server/observability"
)

// proxyOptions are the server options of the LLM API proxy in guard serve (GUARD_PROXY, docs/proxy.md):
// none when it is off.
func proxyOptions(cfg *Config, metrics *observability.Metrics, logger *zap.Logger) ([]server.Option, error) {
	if !cfg.Proxy {
		return nil, nil
	}
	pm, err := llmproxy.NewMetrics(metrics.Registry(), cfg.MetricsPrefix)
	if err != nil {
		return nil, err
	}
	logger.Info("LLM API proxy on", zap.String("openai_upstream", cfg.ProxyOpenAIURL), zap.String("anthropic_upstream", cfg.ProxyAnthropicURL),
		zap.Int("window", cfg.ProxyWindow), zap.Int("overlap", cfg.ProxyOverlap))
	return []server.Option{server.WithLLMProxy(llmproxy.Config{OpenAIBaseURL: cfg.ProxyOpenAIURL, AnthropicBaseURL: cfg.ProxyAnthropicURL,
		DefaultAgent: cfg.ProxyDefaultAgent, Window: cfg.ProxyWindow, Overlap: cfg.ProxyOverlap, Metrics: pm})}, nil
}
