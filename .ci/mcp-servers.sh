# Sourced by .ci/run: installs the reference MCP servers (npm packages of the MCP project, pinned) that the
# MCP gateway's end-to-end tests (examples/server/mcp_e2e_test.go) drive through `guard mcp`, and the official
# TypeScript SDK whose client drives the gateway in some of them, into a cache
# directory outside the repository, and tells the tests where they are. With GUARD_TEST_MCP_SERVERS set,
# those tests fail (instead of skipping) when a server cannot be started, so CI always runs them.
echo "== mcp reference servers"
mcp_servers_version=2026.8.31
mcp_sdk_version=1.32.2 # the official TypeScript SDK, whose client drives the gateway in mcp_typescript_e2e_test.go
mcp_servers_dir="${GUARD_MCP_SERVERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/guard-mcp-servers/$mcp_servers_version}"
if ! command -v npm >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq nodejs npm >/dev/null
fi
if [ ! -x "$mcp_servers_dir/node_modules/.bin/mcp-server-everything" ] ||
  [ ! -x "$mcp_servers_dir/node_modules/.bin/mcp-server-filesystem" ] ||
  [ ! -x "$mcp_servers_dir/node_modules/.bin/mcp-server-memory" ] ||
  [ ! -f "$mcp_servers_dir/node_modules/@modelcontextprotocol/sdk/package.json" ]; then
  mkdir -p "$mcp_servers_dir"
  npm install --silent --no-audit --no-fund --prefix "$mcp_servers_dir" \
    "@modelcontextprotocol/server-everything@$mcp_servers_version" \
    "@modelcontextprotocol/server-filesystem@$mcp_servers_version" \
    "@modelcontextprotocol/server-memory@$mcp_servers_version" \
    "@modelcontextprotocol/sdk@$mcp_sdk_version" >/dev/null
fi
GUARD_TEST_MCP_SERVERS="$mcp_servers_dir/node_modules/.bin"
export GUARD_TEST_MCP_SERVERS
ls "$GUARD_TEST_MCP_SERVERS" | grep '^mcp-server-'
GUARD_TEST_MCP_SDK="$mcp_servers_dir/node_modules/@modelcontextprotocol/sdk"
export GUARD_TEST_MCP_SDK
unset mcp_servers_version mcp_servers_dir mcp_sdk_version
