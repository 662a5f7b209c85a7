//lint:file-ignore SA1019 sampling, elicitation and roots are the session protocol's.

package mcpgateway_test

import (
	"io"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/client/mcpgateway"
)

// TestCapabilitiesOfInitialize: the upstream is announced the client's sampling, elicitation and roots,
// only those the client's initialize has, keys compared exactly.
func TestCapabilitiesOfInitialize(t *testing.T) {
	init := func(caps string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":` + caps +
			`,"clientInfo":{"name":"c","version":"1"}}}` + "\n"
	}
	tests := []struct {
		name, line, want string
	}{
		{"none", init(`{}`), `{}`},
		{"all three", init(`{"sampling":{},"elicitation":{"form":{}},"roots":{"listChanged":true}}`),
			`{"elicitation":{"form":{}},"roots":{"listChanged":true},"sampling":{}}`},
		{"sampling with tools, roots without listChanged", init(`{"sampling":{"tools":{}},"roots":{}}`), `{"roots":{},"sampling":{"tools":{}}}`},
		{"elicitation of protocol 2025-06-18 ({})", init(`{"elicitation":{}}`), `{"elicitation":{}}`},
		{"experimental and extensions are not passed on", init(`{"experimental":{"x":{}},"extensions":{"a/b":{}}}`), `{}`},
		{"keys compared exactly", init(`{"Sampling":{},"ROOTS":{},"Elicitation":{}}`), `{}`},
		{"a key twice: nothing", init(`{"sampling":{},"sampling":{}}`), `{}`},
		{"null is absent", init(`{"sampling":null}`), `{}`},
		{"not an initialize", `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n", `{}`},
		{"not JSON", "hello\n", `{}`},
		{"nothing", "", `{}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mcpgateway.CapabilitiesOfInitialize([]byte(tc.line))
			m := map[string]any{} // (the SDK's JSON always has "roots": RootsV2 says whether it is there)
			if got.Sampling != nil {
				m["sampling"] = normalise(got.Sampling)
			}
			if got.Elicitation != nil {
				m["elicitation"] = normalise(got.Elicitation)
			}
			if got.RootsV2 != nil {
				m["roots"] = normalise(got.RootsV2)
			}
			if c := canon(m); c != tc.want {
				t.Fatalf("capabilities = %s, want %s", c, tc.want)
			}
		})
	}
}

// TestReadFirstMessage: the first line is read and given again before the rest.
func TestReadFirstMessage(t *testing.T) {
	line, rest, err := mcpgateway.ReadFirstMessage(strings.NewReader("one\ntwo\n"), 0)
	if err != nil || string(line) != "one\n" {
		t.Fatalf("line %q, %v", line, err)
	}
	if all, _ := io.ReadAll(rest); string(all) != "one\ntwo\n" {
		t.Fatalf("rest %q", all)
	}
	if _, _, err := mcpgateway.ReadFirstMessage(strings.NewReader(strings.Repeat("x", 100)+"\n"), 10); err == nil {
		t.Fatal("a first line over the limit was taken")
	}
	if line, _, err := mcpgateway.ReadFirstMessage(strings.NewReader(""), 0); err != nil || len(line) != 0 {
		t.Fatalf("empty input: %q %v", line, err)
	}
}
