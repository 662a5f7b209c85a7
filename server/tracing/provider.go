package tracing

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// TracerName is the instrumentation scope of guard's spans.
const TracerName = "github.com/guardrail-control/guard/server"

// DefaultServiceName is service.name when neither OTEL_SERVICE_NAME nor OTEL_RESOURCE_ATTRIBUTES names one.
const DefaultServiceName = "guard"

// OTLP protocols (OTEL_EXPORTER_OTLP_PROTOCOL): the two the Go SDK implements. http/json is not one.
const (
	ProtocolHTTPProtobuf = "http/protobuf"
	ProtocolGRPC         = "grpc"
)

// NewProvider returns a tracer provider that exports spans in batches over OTLP, with protocol
// ProtocolHTTPProtobuf (the default of the OTel specification, port 4318) or ProtocolGRPC (port 4317).
// The OpenTelemetry SDK reads the rest of its configuration from the environment itself, as every OTel
// component does: OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT, _HEADERS, _TIMEOUT, _COMPRESSION, _CERTIFICATE,
// _INSECURE (gRPC), OTEL_TRACES_SAMPLER (default parentbased_always_on), OTEL_BSP_* and
// OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES, which win over guard's defaults (service.name guard,
// service.version version).
//
// Creating the exporter does not connect: an unreachable collector costs dropped spans and an error
// reported to the SDK's error handler, never a failed evaluation. Shut the provider down to flush the
// last batch.
func NewProvider(ctx context.Context, version, protocol string) (*sdktrace.TracerProvider, error) {
	var exp sdktrace.SpanExporter
	var err error
	switch protocol {
	case ProtocolHTTPProtobuf, "":
		exp, err = otlptracehttp.New(ctx)
	case ProtocolGRPC:
		exp, err = otlptracegrpc.New(ctx)
	default:
		return nil, fmt.Errorf("OTLP protocol %q: guard exports %s or %s", protocol, ProtocolHTTPProtobuf, ProtocolGRPC)
	}
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	res, err := Resource(version)
	if err != nil {
		_ = exp.Shutdown(ctx)
		return nil, err
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}

// Resource describes the guard process: the SDK's defaults (telemetry.sdk.*), then guard's service name
// and version, then the environment (OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME), each winning over the
// one before.
func Resource(version string) (*resource.Resource, error) {
	attrs := []attribute.KeyValue{attribute.String("service.name", DefaultServiceName)}
	if version != "" {
		attrs = append(attrs, attribute.String("service.version", version))
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attrs...))
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry resource: %w", err)
	}
	if res, err = resource.Merge(res, resource.Environment()); err != nil {
		return nil, fmt.Errorf("OpenTelemetry resource (OTEL_RESOURCE_ATTRIBUTES): %w", err)
	}
	return res, nil
}
