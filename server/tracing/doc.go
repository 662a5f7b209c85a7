// Package tracing holds guard's OpenTelemetry wiring: W3C trace context parsing for the trace ids of
// observability events, the OTLP (HTTP or gRPC) tracer provider configured by the standard OTEL_* environment
// variables, and the names of the span attributes guard records.
//
// Tracing is off unless configured: a Server without a tracer provider creates no span and pays one nil
// check per evaluation.
package tracing
