#!/usr/bin/env bash
# Notes are resources too: one URI template describes them all, resources/list names
# them (a page of up to 100), and resources/read returns one by its URI. A client or
# its user picks these; the model calls tools.
. "$(dirname "$0")/lib.sh"

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 50, "method": "resources/templates/list"}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 51, "method": "resources/list"}
JSON

post 'Content-Type: application/json' 'Accept: application/json, text/event-stream' "Mcp-Session-Id: $SESSION" 'MCP-Protocol-Version: 2025-11-25' <<'JSON'
{"jsonrpc": "2.0", "id": 52, "method": "resources/read", "params": {"uri": "vault:///Inbox/Try%20tangzhong.md"}}
JSON
