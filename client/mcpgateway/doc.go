// Package mcpgateway puts guard's controls in front of an MCP server without a line of code in the agent:
// the gateway speaks MCP to the client (a coding assistant, a desktop assistant, an agent framework) on one
// side and to the real server (the upstream) on the other, and checks every tool call on the way.
//
// The mapping is the one guard's concepts were made for:
//
//   - each tool of the upstream is a step of type "tool" whose name is the tool's name; its input schema is
//     the step's input_schema (and its output schema, when it has one, the step's output_schema). The agent
//     is registered with these steps at start, and again whenever the upstream announces
//     notifications/tools/list_changed.
//   - a tools/call is checked at stage pre with the call's arguments object as the step input. A deny is
//     answered with a tool error result (isError true) naming the control and its message, and the call is
//     never forwarded; a steer is answered the same way with the steering message and the required actions,
//     so that the model can correct the call and retry. Anything else forwards the call.
//   - the upstream's result is checked at stage post with the step output described at StepOutput
//     (structuredContent when present, else the text of the text blocks and embedded text resources joined
//     with newlines). A deny or a steer withholds the result and answers with a tool error result as at
//     pre.
//   - the upstream's requests to the client (sampling, elicitation, roots) are steps of type
//     StepTypeServerRequest named after their method, checked at pre (the request) and post (the client's
//     answer), and reach only a client that announced the capability (serverrequests.go).
//
// Resources, resource templates, prompts and completions pass through: the gateway forwards those requests
// to the upstream and returns its answers as the upstream wrote them (raw.go), as it does its tool list.
// They are not checked. Logging passes both ways.
//
// The gateway is transport-agnostic: Connect takes the upstream's mcp.Transport (a command over stdio, a
// Streamable HTTP endpoint, an in-memory pipe) and Server returns an *mcp.Server to run on any downstream
// transport. The Guard is what decides: AgentGuard for an agent of the guard server (client.Init, with its
// refresh, fail-open snapshot and in-process evaluation), LocalGuard for a controls file and no server.
//
// Several upstreams are served as one by an Aggregate (aggregate.go; guard mcp --config reads them from an
// mcpServers file, serversconfig.go): tools and prompts named <server>__<name>, one guard session across
// them. An upstream started by a command runs under a watchdog (CommandTransport.Supervisor, supervise.go)
// that kills it and everything it started when the gateway ends, kill -9 included. The upstream is told the
// client's capabilities, not more (clientcaps.go).
//
// For stdio, use LineTransport and CommandTransport rather than the SDK's transports, and serve a session
// with Gateway.Run: a plain tools/call then costs the gateway tens of microseconds instead of most of a
// millisecond (the fast path of Run in fastpath.go, the relay to the upstream in relay.go; docs/mcp.md,
// "Cost").
package mcpgateway
