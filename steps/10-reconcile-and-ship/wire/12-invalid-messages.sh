#!/usr/bin/env bash
# Four messages the server cannot accept, each refused with HTTP 400 and a JSON-RPC
# error: a body that is not JSON, a message without "jsonrpc": "2.0", an id of null
# (MCP ids are strings or integers), and a batch (removed from MCP in 2025-06-18).
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 11, "method": "tools/list"
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"id": 12, "method": "tools/list"}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": null, "method": "tools/list"}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
[{"jsonrpc": "2.0", "id": 13, "method": "ping"}, {"jsonrpc": "2.0", "id": 14, "method": "ping"}]
JSON
