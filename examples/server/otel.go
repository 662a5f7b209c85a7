package main

import (
	"context"
	"net/url"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/guardrail-control/guard/server/tracing"
)

// OTelSettings is the OpenTelemetry part of Config. The OpenTelemetry SDK reads its own variables
// (endpoint, headers, timeout, sampler, resource) from the environment; these fields only decide whether
// export is on and refuse settings guard cannot honour.
type OTelSettings struct {
	// Switch (GUARD_OTEL) forces export on or off; nil follows Endpoint.
	Switch *bool
	// Endpoint (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT) turns export on.
	Endpoint string
	// Protocol (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL).
	Protocol string
	// SDKDisabled (OTEL_SDK_DISABLED) turns export off whatever else is set, as in every OTel SDK.
	SDKDisabled bool
}

// Enabled reports whether spans are exported: OTEL_SDK_DISABLED=true never; otherwise GUARD_OTEL when
// set, else whether an OTLP endpoint is.
func (o OTelSettings) Enabled() bool {
	if o.SDKDisabled {
		return false
	}
	if o.Switch != nil {
		return *o.Switch
	}
	return o.Endpoint != ""
}

// check returns what is wrong with settings that turn export on ("" when nothing): the protocol must be
// one the Go SDK implements. An unsupported protocol set for other components of the environment does not
// matter while guard's export is off.
func (o OTelSettings) check() string {
	if o.Enabled() && o.Protocol != tracing.ProtocolHTTPProtobuf && o.Protocol != tracing.ProtocolGRPC {
		return "OTEL_EXPORTER_OTLP_PROTOCOL (or OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) must be http/protobuf or grpc (the OpenTelemetry Go SDK has no OTLP JSON exporter)"
	}
	return ""
}

// setOTLPEndpoint checks the form of an endpoint: the SDK would otherwise drop every span, logging one
// error per batch.
func setOTLPEndpoint(c *Config, v string) string {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "an http:// or https:// URL"
	}
	if u.User != nil { // the SDK's export errors quote the URL: credentials belong in the headers variable
		return "a URL without credentials (put them in OTEL_EXPORTER_OTLP_HEADERS)"
	}
	c.OTel.Endpoint = v
	return ""
}

// startTracing returns the tracer provider of the server (nil when export is off) and the function that
// flushes and stops it, to run after the HTTP server has drained.
func startTracing(ctx context.Context, o OTelSettings, version string, logger *zap.Logger) (trace.TracerProvider, func(), error) {
	if !o.Enabled() {
		return nil, func() {}, nil
	}
	// Export failures (collector down, refused batch) reach the SDK's global error handler: log them with
	// the server's logger instead of the standard library's.
	otelLog := logger.Named("agent_control.otel")
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { otelLog.Warn("OpenTelemetry export", zap.Error(err)) }))
	tp, err := tracing.NewProvider(ctx, version, o.Protocol)
	if err != nil {
		return nil, nil, err
	}
	fields := []zap.Field{zap.String("protocol", o.Protocol)}
	if u, err := url.Parse(o.Endpoint); err == nil && o.Endpoint != "" {
		fields = append(fields, zap.String("endpoint_host", u.Host)) // never the URL: it may carry credentials
	}
	logger.Info("OpenTelemetry trace export on", fields...)
	return tp, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tp.Shutdown(sctx); err != nil {
			logger.Warn("the last spans could not be exported", zap.Error(err))
		}
	}, nil
}
