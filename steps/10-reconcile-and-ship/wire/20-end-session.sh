#!/usr/bin/env bash
# The client ends its session with DELETE (204). The id is dead from then on: 404.
. "$(dirname "$0")/lib.sh"

send DELETE "Mcp-Session-Id: $SESSION"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 23, "method": "ping"}
JSON
