# Sourced by .ci/run: installs the official LLM API clients for JavaScript (the openai and
# @anthropic-ai/sdk npm packages, pinned) that llmproxy's TestNodeClients drives through the LLM proxy, into
# a cache directory outside the repository, and tells the test where they are (GUARD_TEST_LLM_CLIENTS).
echo "== LLM API clients (npm)"
llm_clients_openai=7.59.0
llm_clients_anthropic=1.15.0
llm_clients_dir="${GUARD_LLM_CLIENTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/guard-llm-clients/openai-$llm_clients_openai-anthropic-$llm_clients_anthropic}"
if ! command -v npm >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq nodejs npm >/dev/null
fi
if [ ! -f "$llm_clients_dir/node_modules/openai/package.json" ] || [ ! -f "$llm_clients_dir/node_modules/@anthropic-ai/sdk/package.json" ]; then
  mkdir -p "$llm_clients_dir"
  npm install --silent --no-audit --no-fund --prefix "$llm_clients_dir" \
    "openai@$llm_clients_openai" "@anthropic-ai/sdk@$llm_clients_anthropic" >/dev/null
fi
GUARD_TEST_LLM_CLIENTS="$llm_clients_dir"
export GUARD_TEST_LLM_CLIENTS
unset llm_clients_openai llm_clients_anthropic llm_clients_dir
