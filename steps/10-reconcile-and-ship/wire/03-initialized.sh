#!/usr/bin/env bash
# The client finishes the handshake. A notification: 202 Accepted, no body.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "method": "notifications/initialized"}
JSON
