package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestListEvaluatorsReadsBothShapes: the client reads the map the server answers (the reference's shape)
// sorted by name, and the list of servers before it.
func TestListEvaluatorsReadsBothShapes(t *testing.T) {
	for _, tc := range []struct {
		name, body string
	}{
		{"map", `{"regex":{"name":"regex","version":"1","description":"d","requires_api_key":false,"timeout_ms":1000,"config_schema":{}},
			"json":{"name":"json","version":"1","description":"d","requires_api_key":false,"timeout_ms":1000,"config_schema":{}}}`},
		{"list", `{"evaluators":[{"name":"json","version":"1","config_schema":{}},{"name":"regex","version":"1","config_schema":{}}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			c, err := NewHTTPClient(srv.URL, "")
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.ListEvaluators(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got[0].Name != "json" || got[1].Name != "regex" || string(got[1].ConfigSchema) != "{}" {
				t.Fatalf("got %+v", got)
			}
		})
	}
}
