package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestAccessLog: one entry per request on agent_control.access with method, route pattern, status,
// duration, bytes, request id, remote address and the key's role, never the key; probes at debug.
func TestAccessLog(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	ts := newTS(t, WithLogger(zap.New(core)), WithAccessLog(true),
		WithAuth(true, []string{"regular-secret-key"}, []string{"admin-secret-key"}))
	for _, tc := range []struct {
		method, path, key string
		id                string
		route             string
		status            int
		role              string
		level             zapcore.Level
	}{
		{"GET", "/health", "", "id-1", "/health", 200, roleNone, zapcore.DebugLevel},
		{"GET", "/ready", "", "id-2", "/ready", 200, roleNone, zapcore.DebugLevel},
		{"GET", "/api/v1/controls", "", "id-3", "/api/v1/controls", 401, roleNone, zapcore.InfoLevel},
		{"GET", "/api/v1/controls/7", "regular-secret-key", "id-4", "/api/v1/controls/{control_id}", 404, roleRegular, zapcore.InfoLevel},
		{"GET", "/api/v1/agents", "admin-secret-key", "id-5", "/api/v1/agents", 200, roleAdmin, zapcore.InfoLevel},
		{"GET", "/api/v1/agents", "wrong-secret-key", "id-6", "/api/v1/agents", 401, roleInvalid, zapcore.InfoLevel},
		{"GET", "/no/such/route", "", "id-7", "unmatched", 404, roleNone, zapcore.InfoLevel},
		{"BREW", "/api/v1/agents", "", "id-8", "unmatched", 405, roleNone, zapcore.InfoLevel},
	} {
		logs.TakeAll()
		hdr := []string{"X-Request-Id", tc.id}
		if tc.key != "" {
			hdr = append(hdr, APIKeyHeader, tc.key)
		}
		r := ts.do(tc.method, tc.path, nil, hdr...)
		entries := logs.FilterLoggerName("agent_control.access").AllUntimed()
		if len(entries) != 1 {
			t.Fatalf("%s %s: %d access entries, want 1: %v", tc.method, tc.path, len(entries), entries)
		}
		e := entries[0]
		f := e.ContextMap()
		wantMethod := tc.method
		if tc.method == "BREW" {
			wantMethod = "OTHER"
		}
		if e.Level != tc.level || f["method"] != wantMethod || f["route"] != tc.route || f["status"] != int64(tc.status) ||
			f["status"] != int64(r.Code) || f["bytes"] != int64(len(r.Body)) || f["request_id"] != tc.id ||
			f["remote"] != "192.0.2.1:1234" || f["role"] != tc.role {
			t.Errorf("%s %s: %v %v (response %d, %d bytes)", tc.method, tc.path, e.Level, f, r.Code, len(r.Body))
		}
		if d, ok := f["duration_ms"].(float64); !ok || d < 0 {
			t.Errorf("%s %s: duration_ms %v", tc.method, tc.path, f["duration_ms"])
		}
		for _, entry := range logs.All() {
			for k, v := range entry.ContextMap() {
				if s, ok := v.(string); ok && strings.Contains(s, "secret-key") {
					t.Errorf("%s %s: field %s holds the key", tc.method, tc.path, k)
				}
			}
		}
	}
}

// TestAccessLogOff: without WithAccessLog(true), or at info level for the probes, nothing is logged.
func TestAccessLogOff(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	ts := newTS(t, WithLogger(zap.New(core)))
	ts.do("GET", "/api/v1/agents", nil)
	if n := logs.FilterLoggerName("agent_control.access").Len(); n != 0 {
		t.Fatalf("access log off: %d entries", n)
	}
	core, logs = observer.New(zapcore.InfoLevel)
	ts = newTS(t, WithLogger(zap.New(core)), WithAccessLog(true))
	ts.do("GET", "/health", nil)
	ts.do("GET", "/api/v1/agents", nil)
	if e := logs.FilterLoggerName("agent_control.access").AllUntimed(); len(e) != 1 || e[0].ContextMap()["route"] != "/api/v1/agents" {
		t.Fatalf("at info: %v, want only the /api/v1/agents line", e)
	}
}

// TestAuthNotesTheRoleForTheAccessLog: the authentication middleware hands the role it found to the access
// log's writer through the writers wrapped around it, so the access log does not digest the key again.
func TestAuthNotesTheRoleForTheAccessLog(t *testing.T) {
	a, err := newAuthenticator(true, []string{"reg"}, []string{"adm"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ key, want string }{{"adm", roleAdmin}, {"reg", roleRegular}, {"nope", roleInvalid}, {"", roleNone}} {
		aw := &accessWriter{ResponseWriter: httptest.NewRecorder()}
		w := &statusWriter{ResponseWriter: aw} // the metrics middleware sits between them
		r := httptest.NewRequest("GET", "/api/v1/agents", nil)
		if tc.key != "" {
			r.Header.Set(APIKeyHeader, tc.key)
		}
		a.wrap(levelRuntime, false, "", http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(w, r)
		if aw.role != tc.want {
			t.Errorf("key %q: noted role %q, want %q", tc.key, aw.role, tc.want)
		}
	}
}
