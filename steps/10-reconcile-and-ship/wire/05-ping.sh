#!/usr/bin/env bash
# ping, the protocol's own liveness check (a method, not a tool): an empty result.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 4, "method": "ping"}
JSON
