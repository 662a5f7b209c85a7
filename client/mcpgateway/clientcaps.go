//lint:file-ignore SA1019 MCP's sampling, roots and elicitation are the session protocol's, which the gateway's clients and upstreams speak: it passes them on.

package mcpgateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The client's capabilities, not more. An upstream offers what depends on the client's capabilities only
// to a client that has them (server-everything lists its sampling and elicitation tools only then): the
// gateway announces to the upstream the capabilities that it passes on (sampling, elicitation, roots) only
// when its client announced them, so that the client lists through the gateway what it lists directly.
// Over stdio there is one client, whose initialize the gateway reads before it starts the upstream
// (ReadFirstMessage, CapabilitiesOfInitialize); over HTTP several clients share one upstream session,
// whose capabilities the operator gives (guard mcp --client-capabilities; none by default).

// ReadFirstMessage reads the first line (the client's first message, its initialize) from r, at most max
// bytes (mcp.DefaultMaxLineLength, 16 MiB, when max <= 0). It returns the line, newline included, and a reader that gives that
// line again followed by the rest of r, for the transport that serves the session. At the end of r before
// any line, line is what there was (often nothing) and err is nil.
func ReadFirstMessage(r io.Reader, max int) (line []byte, rest io.Reader, err error) {
	if max <= 0 {
		max = mcp.DefaultMaxLineLength
	}
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > max {
			return nil, nil, errors.New("mcp gateway: the client's first message is longer than the line limit")
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && err != io.EOF {
			return nil, nil, err
		}
		return buf, io.MultiReader(bytes.NewReader(buf), br), nil
	}
}

// CapabilitiesOfInitialize returns the capabilities the gateway announces to the upstream for a client
// whose first message is line: sampling, elicitation and roots, each only when the client's initialize
// has it (keys compared exactly), with the client's own settings of them (sampling's tools and context,
// elicitation's form and url, roots' listChanged). Anything else, or a first message that is not an
// initialize, gives none. Never nil: nil Options.ClientCapabilities would announce all of them.
func CapabilitiesOfInitialize(line []byte) *mcp.ClientCapabilities {
	out := &mcp.ClientCapabilities{}
	msg, err := exactObject(bytes.TrimSpace(line))
	if err != nil || string(msg["method"]) != `"initialize"` {
		return out
	}
	params, err := exactObject(msg["params"])
	if err != nil {
		return out
	}
	caps, err := exactObject(params["capabilities"])
	if err != nil {
		return out
	}
	if raw, ok := caps["sampling"]; ok {
		if has := hasKeys(raw, "tools", "context"); has != nil {
			out.Sampling = &mcp.SamplingCapabilities{}
			if has["tools"] {
				out.Sampling.Tools = &mcp.SamplingToolsCapabilities{}
			}
			if has["context"] {
				out.Sampling.Context = &mcp.SamplingContextCapabilities{}
			}
		}
	}
	if raw, ok := caps["elicitation"]; ok {
		if has := hasKeys(raw, "form", "url"); has != nil {
			out.Elicitation = &mcp.ElicitationCapabilities{}
			if has["form"] {
				out.Elicitation.Form = &mcp.FormElicitationCapabilities{}
			}
			if has["url"] {
				out.Elicitation.URL = &mcp.URLElicitationCapabilities{}
			}
		}
	}
	if raw, ok := caps["roots"]; ok {
		if m, err := exactObject(raw); err == nil {
			out.RootsV2 = &mcp.RootCapabilities{}
			var lc bool
			if json.Unmarshal(m["listChanged"], &lc) == nil {
				out.RootsV2.ListChanged = lc
			}
		}
	}
	return out
}

// ParseClientCapabilities is the capabilities named in names ("sampling", "elicitation", "roots"), as the
// gateway announces them when it passes them on (elicitation in form mode, roots with listChanged): the
// value of guard mcp --client-capabilities. An unknown name is an error.
func ParseClientCapabilities(names []string) (*mcp.ClientCapabilities, error) {
	out := &mcp.ClientCapabilities{}
	for _, n := range names {
		switch n {
		case "sampling":
			out.Sampling = &mcp.SamplingCapabilities{}
		case "elicitation":
			out.Elicitation = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}
		case "roots":
			out.RootsV2 = &mcp.RootCapabilities{ListChanged: true}
		case "":
		default:
			return nil, errors.New(`unknown capability "` + n + `": sampling, elicitation or roots`)
		}
	}
	return out, nil
}
