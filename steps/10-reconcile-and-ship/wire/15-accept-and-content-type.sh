#!/usr/bin/env bash
# The client must accept both answer shapes, JSON and an SSE stream (else 406), and must
# send JSON (else 415).
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: text/html' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 18, "method": "tools/list"}
JSON

post 'Content-Type: text/plain' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 19, "method": "tools/list"}
JSON
