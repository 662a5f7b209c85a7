// Package llmproxy is guard's LLM API proxy: a reverse proxy for the OpenAI Chat Completions API
// (POST /v1/chat/completions) and the Anthropic Messages API (POST /v1/messages) that evaluates every step of
// an agent's LLM traffic against the agent's controls, plus guard's guardrail endpoint for LiteLLM (POST
// /beta/litellm_basic_guardrail_api). An agent is guarded by changing its client's base URL; its own
// provider key passes through untouched and is never logged or stored.
//
// Each call is split into steps, each evaluated by a Checker exactly as POST /api/v1/evaluation evaluates
// it (in `guard serve` the server's own engine cache and evaluation path; in `guard proxy` the guard
// server's POST /evaluation):
//
//   - the request's messages: an llm step at stage pre (redaction applies before the upstream sees them);
//   - each tool result the model has not read yet (role "tool", "tool_result" blocks): a tool step at
//     stage post, named by the tool, before the upstream sees it;
//   - the model's answer: an llm step at stage post;
//   - each tool call in the answer: a tool step at stage pre, its arguments parsed as JSON, before the
//     client receives it.
//
// A refusal is answered in the API's own error format (status and body documented in docs/proxy.md); a
// streamed answer is held in bounded windows (Config.Window, Config.Overlap), checked and released, and a
// refusal ends the stream with the API's own error event. See docs/proxy.md.
package llmproxy
