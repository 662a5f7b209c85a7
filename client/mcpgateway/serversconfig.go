package mcpgateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
)

// The mcpServers configuration that Claude Desktop (claude_desktop_config.json), Cursor (.cursor/mcp.json),
// Windsurf, Cline and others keep their MCP servers in, and VS Code's (.vscode/mcp.json, whose map is
// called "servers"): guard mcp --config FILE serves every entry through one gateway (Aggregate).

// ServerConfig is one entry of an mcpServers configuration: a command (stdio) or a URL (Streamable HTTP).
type ServerConfig struct {
	Name    string            // the entry's key
	Command string            // the program of a stdio server
	Args    []string          // its arguments
	Env     map[string]string // added to the gateway's environment for the command
	Cwd     string            // its working directory ("" the gateway's)
	URL     string            // the endpoint of a Streamable HTTP server
	Headers map[string]string // sent with every request to URL
	// Ignored are the entry's keys the gateway does not use (clients' own settings: "autoApprove",
	// "timeout", ...), sorted, to be logged.
	Ignored []string
}

// maxServersConfig bounds a configuration file.
const maxServersConfig = 1 << 20

// LoadServersConfig reads an mcpServers configuration file (ParseServersConfig).
func LoadServersConfig(path string) ([]ServerConfig, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mcp servers config: %w", err)
	}
	if len(b) > maxServersConfig {
		return nil, fmt.Errorf("mcp servers config %s: larger than %d bytes", path, maxServersConfig)
	}
	servers, err := ParseServersConfig(b)
	if err != nil {
		return nil, fmt.Errorf("mcp servers config %s: %w", path, err)
	}
	return servers, nil
}

// ParseServersConfig decodes {"mcpServers": {NAME: {"command", "args", "env", "cwd"} | {"url", "headers"}}}
// (or VS Code's {"servers": ...} with "type": "stdio" | "http"), entries in the file's order. Keys are
// compared exactly ("Command" is not "command") and a key given twice is an error, at any depth. Other keys
// of the file (VS Code's "inputs") and of an entry (a client's own settings) are ignored, the entry's
// listed in Ignored; an entry with "disabled": true is left out. An entry needs a command or a URL, not
// both; "type": "sse" (the old HTTP+SSE transport) is refused: the gateway speaks Streamable HTTP.
func ParseServersConfig(b []byte) ([]ServerConfig, error) {
	top, err := exactObject(b)
	if err != nil {
		return nil, err
	}
	raw, ok := top["mcpServers"]
	key := "mcpServers"
	if vs, ok2 := top["servers"]; ok2 {
		if ok {
			return nil, errors.New(`both "mcpServers" and "servers": give one`)
		}
		raw, ok, key = vs, true, "servers"
	}
	if !ok {
		return nil, errors.New(`no "mcpServers" (nor VS Code's "servers") object`)
	}
	names, entries, err := exactMembers(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	var out []ServerConfig
	for _, name := range names {
		sc, skip, err := parseServerEntry(name, entries[name])
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", key, name, err)
		}
		if !skip {
			out = append(out, sc)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no server", key)
	}
	return out, nil
}

func parseServerEntry(name string, raw json.RawMessage) (sc ServerConfig, skip bool, err error) {
	sc.Name = name
	if name == "" {
		return sc, false, errors.New("a server's name must not be empty")
	}
	m, err := exactObject(raw)
	if err != nil {
		return sc, false, err
	}
	var typ string
	var disabled bool
	fields := map[string]any{"command": &sc.Command, "args": &sc.Args, "env": &sc.Env, "cwd": &sc.Cwd, "url": &sc.URL,
		"headers": &sc.Headers, "type": &typ, "disabled": &disabled}
	for k, v := range m {
		dst, known := fields[k]
		if !known {
			sc.Ignored = append(sc.Ignored, k)
			continue
		}
		if err := decodeExact(v, dst); err != nil {
			return sc, false, fmt.Errorf("%s: %w", k, err)
		}
	}
	sort.Strings(sc.Ignored)
	if disabled {
		return sc, true, nil
	}
	switch typ {
	case "", "stdio", "http", "streamable-http", "streamableHttp":
	case "sse":
		return sc, false, errors.New(`type: "sse" (HTTP+SSE) is not supported: the gateway speaks Streamable HTTP ("type": "http")`)
	default:
		return sc, false, fmt.Errorf("type: unknown %q (stdio or http)", typ)
	}
	switch {
	case sc.Command == "" && sc.URL == "":
		return sc, false, errors.New(`needs a "command" or a "url"`)
	case sc.Command != "" && sc.URL != "":
		return sc, false, errors.New(`has both a "command" and a "url": give one`)
	case sc.URL != "" && (len(sc.Args) > 0 || len(sc.Env) > 0 || sc.Cwd != ""):
		return sc, false, errors.New(`"args", "env" and "cwd" are for a "command", not a "url"`)
	case sc.Command != "" && len(sc.Headers) > 0:
		return sc, false, errors.New(`"headers" are for a "url"`)
	case sc.URL != "" && !strings.HasPrefix(sc.URL, "http://") && !strings.HasPrefix(sc.URL, "https://"):
		return sc, false, errors.New("url: must be http:// or https://")
	}
	return sc, false, nil
}

// decodeExact decodes a configuration value: a string, a list of strings, or an object of strings (whose
// keys are checked for duplicates; map keys are exact by nature); or a bool.
func decodeExact(raw json.RawMessage, dst any) error {
	if d, ok := dst.(*map[string]string); ok {
		m, err := exactObject(raw)
		if err != nil {
			return err
		}
		out := make(map[string]string, len(m))
		for k, v := range m {
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return fmt.Errorf("%s: must be a string", k)
			}
			out[k] = s
		}
		*d = out
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("must be %s", kindOf(dst))
		}
		return err
	}
	return nil
}

func kindOf(dst any) string {
	switch dst.(type) {
	case *string:
		return "a string"
	case *[]string:
		return "a list of strings"
	case *bool:
		return "true or false"
	}
	return "of another type"
}
