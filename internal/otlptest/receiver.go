// Package otlptest is a minimal OTLP trace receiver for tests, over HTTP (protobuf bodies posted to
// /v1/traces) or gRPC (the TraceService): it decodes the official ExportTraceServiceRequest
// (go.opentelemetry.io/proto/otlp), as a collector does, and keeps the spans for assertions.
package otlptest

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// Span is one received span with the resource attributes of its batch.
type Span struct {
	*tracepb.Span
	Resource map[string]any
	Scope    string
}

// TraceIDHex returns the span's trace id in hex.
func (s Span) TraceIDHex() string { return hex.EncodeToString(s.GetTraceId()) }

// SpanIDHex returns the span's id in hex.
func (s Span) SpanIDHex() string { return hex.EncodeToString(s.GetSpanId()) }

// ParentSpanIDHex returns the span's parent id in hex ("" for a root span).
func (s Span) ParentSpanIDHex() string { return hex.EncodeToString(s.GetParentSpanId()) }

// Attrs returns the span's attributes as Go values.
func (s Span) Attrs() map[string]any { return Attributes(s.GetAttributes()) }

// Receiver is an OTLP trace receiver on a loopback port.
type Receiver struct {
	url      string
	stop     func()
	mu       sync.Mutex
	spans    []Span
	requests int
	changed  chan struct{}
}

// NewReceiver starts an OTLP/HTTP receiver; Close stops it.
func NewReceiver() *Receiver {
	r := &Receiver{changed: make(chan struct{}, 1)}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	r.url, r.stop = srv.URL, srv.Close
	return r
}

// NewGRPCReceiver starts an OTLP/gRPC receiver (plaintext); Close stops it.
func NewGRPCReceiver() (*Receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Receiver{changed: make(chan struct{}, 1)}
	gs := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(gs, traceService{r: r})
	go func() { _ = gs.Serve(ln) }()
	r.url, r.stop = "http://"+ln.Addr().String(), gs.Stop
	return r, nil
}

// traceService is the gRPC TraceService of a Receiver.
type traceService struct {
	coltracepb.UnimplementedTraceServiceServer
	r *Receiver
}

// Export keeps the spans of one request.
func (s traceService) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	s.r.add(req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// URL is the receiver's base URL, the value of OTEL_EXPORTER_OTLP_ENDPOINT.
func (r *Receiver) URL() string { return r.url }

// Close stops the receiver.
func (r *Receiver) Close() { r.stop() }

// serve answers POST /v1/traces as the OTLP/HTTP specification says: 200 with an
// ExportTraceServiceResponse, 400 for a body that does not decode.
func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		http.NotFound(w, req)
		return
	}
	if req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "unsupported media type", http.StatusUnsupportedMediaType)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, "bad gzip", http.StatusBadRequest)
			return
		}
		defer zr.Close()
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, "read", http.StatusBadRequest)
		return
	}
	var ex coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &ex); err != nil {
		http.Error(w, "decode", http.StatusBadRequest)
		return
	}
	r.add(&ex)
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// add keeps the spans of one export request.
func (r *Receiver) add(ex *coltracepb.ExportTraceServiceRequest) {
	var got []Span
	for _, rs := range ex.GetResourceSpans() {
		res := Attributes(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				got = append(got, Span{Span: sp, Resource: res, Scope: ss.GetScope().GetName()})
			}
		}
	}
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	r.requests++
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// Spans returns the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// WaitFor waits until keep returns true for some received span, or the timeout passes (ok false).
func (r *Receiver) WaitFor(timeout time.Duration, keep func(Span) bool) (Span, bool) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		for _, s := range r.Spans() {
			if keep(s) {
				return s, true
			}
		}
		select {
		case <-r.changed:
		case <-deadline.C:
			return Span{}, false
		}
	}
}

// Attributes turns OTLP key-values into Go values: string, bool, int64, float64 (others as their
// string form).
func Attributes(kvs []*commonpb.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch x := v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.GetKey()] = x.StringValue
		case *commonpb.AnyValue_BoolValue:
			m[kv.GetKey()] = x.BoolValue
		case *commonpb.AnyValue_IntValue:
			m[kv.GetKey()] = x.IntValue
		case *commonpb.AnyValue_DoubleValue:
			m[kv.GetKey()] = x.DoubleValue
		default:
			m[kv.GetKey()] = v.String()
		}
	}
	return m
}
